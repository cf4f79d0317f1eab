"""Interceptors and credentials, as a real server sees them (spec 4, 5.5 security)."""

from __future__ import annotations

from typing import Any

import pytest

from parley.client import (
    APIKeyAuth,
    BearerAuth,
    ClientCall,
    ClientInterceptor,
    CredentialsAuth,
    ExtensionsHeader,
    StaticCredentials,
    connect,
)
from parley.demo import demo
from parley.protocol import UnauthenticatedError
from parley.server import APIKeyVerifier, SchemeVerifier, TokenVerifier, create_app
from parley.types import APIKeySecurityScheme, HTTPAuthSecurityScheme
from tests.client.agents import HeaderGate, card
from tests.servers import running


def gated_app(**gate: Any) -> HeaderGate:
    schemes = {
        "bearer": HTTPAuthSecurityScheme(scheme="bearer"),
        "key": APIKeySecurityScheme(name="api_key", in_="query"),
        "cookie": APIKeySecurityScheme(name="session", in_="cookie"),
    }
    agent_card = card(
        security_schemes=schemes, security=[{"bearer": []}, {"key": []}, {"cookie": []}]
    )

    async def token(value: str) -> str | None:
        return "user" if value == "s3cret" else None

    verifiers: dict[str, SchemeVerifier] = {
        "bearer": TokenVerifier(token),
        "key": APIKeyVerifier({"user": "k1"}),
        "cookie": APIKeyVerifier({"user": "abc"}),
    }
    return HeaderGate(create_app(demo, agent_card, security=verifiers), **gate)


async def test_bearer_token_reaches_the_server() -> None:
    """Spec 4.3: credentials go in HTTP headers; a missing one is refused (4.4)."""
    gate = gated_app(header=("authorization", "Bearer s3cret"))
    with running(gate) as url:
        async with connect(url) as anonymous:
            with pytest.raises(UnauthenticatedError):
                await anonymous.send_message("hi")
        async with connect(url, interceptors=[BearerAuth("s3cret")]) as client:
            await client.send_message("hi")
            async for _ in client.stream_message("write a report"):
                pass
    assert gate.seen[-1]["authorization"] == "Bearer s3cret"


async def test_api_key_placed_as_the_card_says() -> None:
    """Spec 5.5 (APIKeySecurityScheme): the key goes where ``in`` says: the query here."""
    gate = gated_app(query="api_key=k1")
    with running(gate) as url:
        async with connect(url, interceptors=[APIKeyAuth("k1")]) as client:
            await client.send_message("hi")


async def test_credential_provider_picks_by_security_requirement() -> None:
    """Spec 5.5 (security): the first requirement the provider can satisfy is used."""
    gate = gated_app(header=("cookie", "session=abc"))
    credentials = StaticCredentials({"cookie": "abc"})
    with running(gate) as url:
        async with connect(url, interceptors=[CredentialsAuth(credentials)]) as client:
            await client.send_message("hi")
    assert "authorization" not in gate.seen[-1]


async def test_extensions_header_and_hooks_see_every_call() -> None:
    """Spec 3.2.6 (X-A2A-Extensions) and interceptors seeing requests and answers."""

    class Recorder(ClientInterceptor):
        def __init__(self) -> None:
            self.log: list[str] = []

        async def before(self, call: ClientCall) -> None:
            self.log.append(f"> {call.operation.name}")

        async def after(self, call: ClientCall, result: Any) -> None:
            self.log.append(f"< {result.kind}")

        async def failed(self, call: ClientCall, error: Exception) -> None:
            self.log.append(f"! {type(error).__name__}")

    gate = HeaderGate(create_app(demo, card()))
    recorder = Recorder()
    interceptors = [ExtensionsHeader(["urn:x:one"]), recorder]
    with running(gate) as url:
        async with connect(url, interceptors=interceptors, extensions=["urn:x:two"]) as client:
            await client.send_message("hi")
            with pytest.raises(Exception, match="not found"):
                await client.get_task("nope")
    assert gate.seen[0]["x-a2a-extensions"] == "urn:x:one, urn:x:two"
    assert recorder.log == ["> send_message", "< task", "> get_task", "! TaskNotFoundError"]
