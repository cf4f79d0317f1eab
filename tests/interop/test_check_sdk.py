"""``parley check`` against the official SDKs' agents finds their deviations from the
specification (docs/interop.md lists them), and nothing they do right.

Each agent is a peer of ``tests/interop/peers`` (a2a-sdk 0.3.26 on each binding, as it
is, without streaming or the extended card (``--plain``), and with push (``--push``);
a2a-sdk 1.3 on its three bindings). The failures expected are exactly the deviations,
each with what makes it one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parley import check
from parley.check import Report, Status
from tests.interop.sdk import serving_peer

_OFF_PUSH = {"push.not-declared": "-32603"}
_REST = {
    "envelope.parse-error": "got 500",
    "envelope.invalid-params": "got 500",
    "envelope.message-id-required": "got 200",
    "envelope.content-type": "text/plain",
}
_UNHANDLED = ("unknown exception", "failed: ReadError")
"""What the SDK's HTTP+JSON server does with an exception its handler does not catch: a
500 saying "unknown exception", or, now and then, the connection closed unanswered."""

SDK_DEVIATIONS: dict[tuple[str, str], dict[str, str | tuple[str, ...]]] = {
    ("JSONRPC", ""): {
        "envelope.parse-error": "has no id",
        "envelope.content-type": "text/plain",
        **_OFF_PUSH,
    },
    ("JSONRPC", "--plain"): {
        "envelope.parse-error": "has no id",
        "envelope.content-type": "text/plain",
        "card.no-extended-card": "InternalError (-32603)",
        "stream.not-declared": "InternalError (-32603)",
        **_OFF_PUSH,
    },
    ("JSONRPC", "--push"): {
        "envelope.parse-error": "has no id",
        "envelope.content-type": "text/plain",
    },
    ("HTTP+JSON", ""): {
        **_REST,
        "stream.subscribe-not-found": "broke off",
        "push.not-declared": _UNHANDLED,
    },
    ("HTTP+JSON", "--plain"): {
        **_REST,
        "stream.not-declared": "HTTP 500",
        "push.not-declared": _UNHANDLED,
    },
    ("HTTP+JSON", "--push"): {
        **_REST,
        "stream.subscribe-not-found": "broke off",
        "push.configs": _UNHANDLED,
        "push.task-not-found": _UNHANDLED,
    },
    ("GRPC", ""): {
        "envelope.message-id-required": "the call succeeded",
        "push.not-declared": "Unexpected",
    },
    ("GRPC", "--plain"): {
        "envelope.message-id-required": "the call succeeded",
        "card.no-extended-card": "answered a result",
        "stream.not-declared": "Unexpected",
        "push.not-declared": "Unexpected",
    },
    ("GRPC", "--push"): {
        "envelope.message-id-required": "the call succeeded",
        "push.configs": "Method not implemented",
        "push.task-not-found": "Method not implemented",
    },
}
"""a2a-sdk 0.3.26, per binding and peer option: each check it fails, and a piece of the
reason that says why (docs/interop.md)."""

SDK1_DEVIATIONS: dict[tuple[str, str], str] = {
    ("card.cache-control", "agent"): "no max-age",
    ("envelope.version-not-supported", "GRPC"): "got NOT_FOUND",
    ("envelope.content-type", "JSONRPC"): "text/plain",
    ("envelope.content-type", "HTTP+JSON"): "text/plain",
    ("envelope.a2a-json", "HTTP+JSON"): "'application/json'",
}
"""a2a-sdk 1.3 (with and without push): each check it fails, on which binding."""


def _failures(report: Report) -> dict[tuple[str, str], str]:
    return {
        (r.check.id, r.binding or "agent"): r.reason
        for r in report.results
        if r.status is Status.failed
    }


@pytest.mark.parametrize(("binding", "option"), sorted(SDK_DEVIATIONS))
async def test_the_checks_find_what_a2a_sdk_0_3_does_differently(
    sdk: Path, binding: str, option: str
) -> None:
    options = ["--binding", binding, *([option] if option else [])]
    with serving_peer(sdk, "sdk_server.py", *options, grpc=binding == "GRPC") as served:
        report = await check.run(f"http://127.0.0.1:{served.port}", webhook="http://127.0.0.1:9/")
    assert [(s.version, s.binding) for s in report.surfaces] == [("0.3", binding)]
    found = {check_id: reason for (check_id, _), reason in _failures(report).items()}
    expected = SDK_DEVIATIONS[(binding, option)]
    # now and then its HTTP+JSON server closes the connection on a cancel it refuses
    sometimes = {"tasks.cancel-ended"} if binding == "HTTP+JSON" else set()
    if "tasks.cancel-ended" in found and "tasks.cancel-ended" in sometimes:
        assert "failed: ReadError" in found.pop("tasks.cancel-ended")
    assert set(found) == set(expected), check.text(report)
    for check_id, why in expected.items():
        reasons = why if isinstance(why, tuple) else (why,)
        assert any(reason in found[check_id] for reason in reasons), (check_id, found[check_id])
    assert sum(r.status is Status.passed for r in report.results) >= 10


@pytest.mark.parametrize("option", ["", "--push"])
async def test_the_checks_find_what_a2a_sdk_1_3_does_differently(sdk1: Path, option: str) -> None:
    with serving_peer(sdk1, "sdk1_server.py", *([option] if option else []), grpc=True) as served:
        report = await check.run(f"http://127.0.0.1:{served.port}", webhook="http://127.0.0.1:9/")
    assert {s.binding for s in report.surfaces} == {"JSONRPC", "HTTP+JSON", "GRPC"}
    found = _failures(report)
    assert set(found) == set(SDK1_DEVIATIONS), check.text(report)
    for where, why in SDK1_DEVIATIONS.items():
        assert why in found[where], (where, found[where])
    passed = {r.check.id for r in report.results if r.status is Status.passed}
    assert {"tasks.send", "stream.events", "bindings.same-task", "card.etag"} <= passed
