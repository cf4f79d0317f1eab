"""parley's demo agent passes every MUST and SHOULD check on every version and binding
it serves: in process (ASGI, no socket) and over real sockets with gRPC too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from parley import check
from parley.check import Level, Report, Status
from parley.client import APIKeyAuth
from parley.demo import create_demo_app, demo, demo_card
from parley.server import APIKeyVerifier, GRPCOptions, SigningKeys, create_app
from parley.server.push import PushSettings
from parley.types import APIKeySecurityScheme
from tests.servers import running

WEBHOOK = "http://127.0.0.1:9/a2a-check"
"""Accepted by the demo below (loopback allowed); never called, the tasks have ended."""


def _demo() -> object:
    return create_demo_app(push=PushSettings(allow=["127.0.0.0/8"]))


def _failures(report: Report) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for result in report.results:  # every MUST and SHOULD
        if result.status is Status.failed and result.check.level is not Level.may:
            found.setdefault(result.check.id, []).append(f"[{result.where}] {result.reason}")
    return found


def _assert_passes(report: Report) -> None:
    assert not _failures(report), check.text(report)


async def test_the_demo_agent_passes_in_process() -> None:
    app = _demo()
    async with app.lifespan():  # type: ignore[attr-defined]
        report = await check.run(app=app, webhook=WEBHOOK, receiver="127.0.0.1:0")
    offered = {(s.version, s.binding) for s in report.surfaces}
    assert offered == {
        ("1.0", "JSONRPC"), ("1.0", "HTTP+JSON"), ("0.3", "JSONRPC"), ("0.3", "HTTP+JSON"),
        ("2025-early", "JSONRPC"),
    }  # fmt: skip
    _assert_passes(report)
    ran = {r.check.id for r in report.results if r.status is Status.passed}
    assert {"tasks.send", "stream.events", "push.configs", "push.delivery"} <= ran
    assert ("tasks.send", "2025-early") in {(r.check.id, r.version) for r in report.results}


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    app = create_demo_app(push=PushSettings(allow=["127.0.0.0/8"]), grpc=GRPCOptions(port=0))
    with running(app) as url:
        yield url


async def test_the_demo_agent_passes_on_every_binding_over_sockets(served: str) -> None:
    report = await check.run(served, webhook=WEBHOOK, receiver="127.0.0.1:0")
    assert {s.binding for s in report.surfaces} == {"JSONRPC", "HTTP+JSON", "GRPC"}
    _assert_passes(report)
    grpc = [r for r in report.results if r.binding == "GRPC" and r.status is Status.passed]
    assert {r.version for r in grpc} == {"1.0", "0.3"}


def _secured(**options: Any) -> Any:
    card = demo_card().model_copy(
        update={
            "security_schemes": {"key": APIKeySecurityScheme(name="X-API-Key", in_="header")},
            "security": [{"key": []}],
            "supports_authenticated_extended_card": True,
        }
    )
    extended = card.model_copy(update={"name": "parley demo agent (extended)"})
    return create_app(
        demo,
        card,
        security={"key": APIKeyVerifier({"alice": "k-alice"})},
        extended_card=extended,
        **options,
    )


@pytest.fixture(scope="module")
def secured() -> Iterator[str]:
    app = _secured(grpc=GRPCOptions(port=0), signing_keys=SigningKeys.generate())
    with running(app) as url:
        yield url


async def test_an_agent_behind_an_api_key_passes_with_the_key(secured: str) -> None:
    report = await check.run(secured, interceptors=[APIKeyAuth("k-alice")])
    _assert_passes(report)
    auth = {(r.check.id, r.binding) for r in report.results if r.status is Status.passed}
    for binding in ("JSONRPC", "HTTP+JSON", "GRPC"):
        assert ("auth.required", binding) in auth
        assert ("auth.accepted", binding) in auth
        assert ("auth.extended-card", binding) in auth
    assert ("auth.challenge", "HTTP+JSON") in auth
    assert ("card.signatures", None) in auth  # signed, one signature per version's card


async def test_without_credentials_the_checks_that_need_them_are_skipped(secured: str) -> None:
    report = await check.run(secured, only=["auth", "tasks.send"])
    statuses = {(r.check.id, r.status) for r in report.results}
    assert ("auth.required", Status.passed) in statuses
    assert ("auth.accepted", Status.skipped) in statuses
    refused = [r for r in report.results if r.check.id == "tasks.send"]
    assert refused
    assert all(r.status is Status.failed and "Unauthenticated" in r.reason for r in refused)
