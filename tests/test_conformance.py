"""The conformance observer itself: it must catch a wrong wire field, not just pass."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

import httpx
import pytest

from tests.conformance import Observations, observe

TASK = {
    "kind": "task",
    "id": "t1",
    "contextId": "c1",
    "status": {"state": "completed"},
}


def fake_server(body: bytes, content_type: bytes = b"application/json") -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", content_type)]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


async def observed_call(
    body: bytes, request: Any, content_type: bytes = b"application/json", path: str = "/"
) -> Observations:
    seen = Observations()
    app = fake_server(body, content_type)

    async def wrapped(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        await observe(app, dict(scope), receive, send, seen, "/")

    transport = httpx.ASGITransport(app=wrapped)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        if path == "/":
            await client.post(
                path, content=json.dumps(request), headers={"content-type": "application/json"}
            )
        else:
            await client.get(path)
    return seen


def answer(result: Any, request_id: Any = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


GET = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t1"}}


async def test_a_valid_answer_passes() -> None:
    seen = await observed_call(answer(TASK), GET)
    assert seen.checked == 1
    assert seen.violations == []


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (answer({**TASK, "contextID": "c1", "contextId": None}), "contextId renamed"),
        (answer({k: v for k, v in TASK.items() if k != "kind"}), "kind missing"),
        (answer({**TASK, "status": {"state": "done"}}), "state outside the enum"),
        (json.dumps({"id": 1, "result": TASK}).encode(), "jsonrpc member missing"),
        (answer(TASK, request_id=2), "id not echoed"),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}', "error code a string"),
        (b"not json", "body not JSON"),
    ],
)
async def test_a_wrong_wire_field_is_caught(body: bytes, why: str) -> None:
    seen = await observed_call(body, GET)
    assert seen.violations, why


async def test_a_success_to_an_unknown_method_is_caught() -> None:
    seen = await observed_call(answer(TASK), {**GET, "method": "tasks/teleport"})
    assert seen.violations


async def test_sse_events_are_each_checked_and_ids_must_rise() -> None:
    stream = {**GET, "method": "message/stream"}
    good = b"id: 1\ndata: %s\n\nid: 2\ndata: %s\n\n" % (answer(TASK), answer(TASK))
    assert (await observed_call(good, stream, b"text/event-stream")).violations == []
    bad_event = b"id: 1\ndata: %s\n\n" % answer({**TASK, "kind": "tusk"})
    assert (await observed_call(bad_event, stream, b"text/event-stream")).violations
    falling = b"id: 2\ndata: %s\n\nid: 1\ndata: %s\n\n" % (answer(TASK), answer(TASK))
    assert (await observed_call(falling, stream, b"text/event-stream")).violations


async def test_a_jsonrpc_answer_with_another_content_type_is_caught() -> None:
    seen = await observed_call(answer(TASK), GET, b"text/plain")
    assert seen.violations


async def test_cards_are_checked() -> None:
    card_path = "/.well-known/agent-card.json"
    seen = await observed_call(
        json.dumps({"name": "no other field"}).encode(), None, path=card_path
    )
    assert seen.violations


V1_GET = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t1"}}
V1_TASK = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}


async def test_a_valid_v1_answer_passes() -> None:
    """v1.0.1 §5.5: a v1.0 answer is ProtoJSON of the normative proto."""
    seen = await observed_call(answer(V1_TASK), V1_GET)
    assert seen.checked == 1
    assert seen.violations == []


@pytest.mark.parametrize(
    "task",
    [
        {**V1_TASK, "kind": "task"},  # a v0.3 discriminator: unknown to the proto
        {**V1_TASK, "status": {"state": "completed"}},  # a v0.3 enum spelling
        {
            **V1_TASK,
            "history": [
                {"messageId": "m", "role": "ROLE_USER", "parts": [{"kind": "text", "text": "x"}]}
            ],
        },
    ],
)
async def test_a_v1_answer_in_v03_shapes_is_caught(task: dict[str, Any]) -> None:
    """v1.0.1 §5.5, §4.1.6: no ``kind``, enums as ``TASK_STATE_*``; unknown fields refused."""
    seen = await observed_call(answer(task), V1_GET)
    assert len(seen.violations) == 1
    assert "is not ProtoJSON of lf.a2a.v1.Task" in seen.violations[0]


async def test_a_v1_error_needs_an_error_info() -> None:
    """v1.0.1 §9.5: a v1.0 JSON-RPC error carries a google.rpc.ErrorInfo in ``data``."""
    bare = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "x"}})
    seen = await observed_call(bare.encode(), V1_GET)
    assert any("without a google.rpc.ErrorInfo" in text for text in seen.violations)
    info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org"}  # fmt: skip
    good = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "x", "data": [info]}}
    seen = await observed_call(json.dumps(good).encode(), V1_GET)
    assert seen.violations == []
