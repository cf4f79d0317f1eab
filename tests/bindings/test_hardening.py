"""Hostile input gets the protocol's error on every binding, never a 500 or a traceback
(spec 8.1, 8.2; docs/security.md "Limits"): bodies that are not declared JSON, JSON nested
100,000 deep, oversized ids and metadata, ids with control characters, thousands of
referenceTaskIds; and X-Forwarded-* believed only from trusted proxies."""

from __future__ import annotations

import json
import os

import httpx
import pytest

from parley.client import Client
from parley.protocol import InvalidParamsError
from parley.server import create_app
from parley.types import Message, Role, TextPart
from tests.bindings.conftest import Served, connect
from tests.server.agents import ScriptedAgent, card

JSON = {"content-type": "application/json"}
SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "message/send",
    "params": {
        "message": {
            "role": "user",
            "messageId": "m-form",
            "parts": [{"kind": "text", "text": "echo hi"}],
        }
    },
}
REST_SEND = '{"message":{"messageId":"m-rest","role":"ROLE_USER","content":[{"text":"echo"}]}}'


def _message(text: str = "echo hi", **fields: object) -> Message:
    return Message(
        role=Role.user, message_id=os.urandom(8).hex(), parts=[TextPart(text=text)], **fields
    )


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
async def test_bodies_not_declared_json_are_refused_with_415(
    served: Served, content_type: str | None
) -> None:
    """A cross-site form (text/plain) cannot start a task: both HTTP bindings answer 415."""
    headers = {"content-type": content_type} if content_type else {}

    async with httpx.AsyncClient(base_url=served.base) as http:
        rpc = await http.post("/", content=json.dumps(SEND), headers=headers)
        rest = await http.post("/v1/message:send", content=REST_SEND, headers=headers)
    assert rpc.status_code == 415
    assert rpc.json()["error"]["code"] == -32600
    assert rest.status_code == 415
    assert "application/json" in rest.json()["message"]


async def test_a2a_json_media_type_is_accepted(served: Served) -> None:
    headers = {"content-type": "application/a2a+json; charset=utf-8"}
    async with httpx.AsyncClient(base_url=served.base) as http:
        rpc = await http.post("/", json=SEND, headers=headers)
        rest = await http.post("/v1/message:send", content=REST_SEND, headers=headers)
    assert rpc.status_code == 200
    assert "result" in rpc.json()
    assert rest.status_code == 200


async def test_json_nested_100000_deep_is_invalid_params(served: Served) -> None:
    """Spec 8.1: -32602 over JSON-RPC, 400 over REST; not a 500 RecursionError."""
    deep = "[" * 100_000 + "]" * 100_000
    rpc_body = '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"metadata":{"x":%s}}}'
    rest_body = '{"message":{"messageId":"m","role":"ROLE_USER"},"metadata":{"x":%s}}'
    async with httpx.AsyncClient(base_url=served.base, headers=JSON) as http:
        rpc = await http.post("/", content=rpc_body % deep)
        rest = await http.post("/v1/message:send", content=rest_body % deep)
    assert rpc.status_code == 200
    assert rpc.json()["error"]["code"] == -32602
    assert rest.status_code == 400
    assert rest.json()["code"] == -32602
    assert "Traceback" not in rpc.text + rest.text


async def test_too_many_reference_task_ids(served: Served) -> None:
    """30,000 referenceTaskIds cost seconds of store reads; the limit is 64. (Only
    JSON-RPC carries them: the v0.3 proto Message has no referenceTaskIds.)"""
    message = _message(reference_task_ids=[f"t{index}" for index in range(30_000)])
    async with await connect(served, "JSONRPC") as client:
        with pytest.raises(InvalidParamsError, match="more than 64 tasks"):
            await client.send_message(message)


async def test_metadata_too_large_or_too_deep(client: Client) -> None:
    with pytest.raises(InvalidParamsError, match="larger than 65536 bytes"):
        await client.send_message(_message(), metadata={"blob": "x" * 70_000})
    nested: dict[str, object] = {}
    inner = nested
    for _ in range(25):
        inner["x"] = inner = {}
    with pytest.raises(InvalidParamsError, match="nests deeper than 20 levels"):
        await client.send_message(_message(metadata=nested))


@pytest.mark.parametrize(
    ("task_id", "problem"),
    [("t" * 300, "longer than 256"), ("a\x00b", "control character"), ("a\nb", "control")],
)
async def test_bad_ids_are_invalid_params(client: Client, task_id: str, problem: str) -> None:
    """Ids are bounded and printable on every operation, so no store ever sees them."""
    with pytest.raises(InvalidParamsError, match=problem) as raised:
        await client.get_task(task_id)
    assert task_id not in raised.value.message
    with pytest.raises(InvalidParamsError, match=problem):
        await client.cancel_task(task_id)
    with pytest.raises(InvalidParamsError, match=problem):
        async for _ in client.resubscribe(task_id):
            pass
    with pytest.raises(InvalidParamsError, match=problem):
        await client.send_message(_message(task_id=task_id))


async def test_errors_do_not_echo_large_input(served: Served) -> None:
    method = "m" * 10_000
    async with httpx.AsyncClient(base_url=served.base, headers=JSON) as http:
        rpc = await http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": method})
        rest = await http.get("/v1/" + "p" * 5_000)
    assert rpc.json()["error"]["code"] == -32601
    assert len(rpc.text) < 300
    assert rest.status_code == 404
    assert len(rest.text) < 300


@pytest.mark.parametrize(("allowed", "believed"), [("10.1.2.3", False), ("127.0.0.0/8", True)])
async def test_forwarded_headers_only_from_trusted_proxies(allowed: str, believed: bool) -> None:
    """The card's address comes from X-Forwarded-* only when the peer is a trusted proxy
    (``forwarded_allow_ips``, as uvicorn's); anyone else gets the Host they called."""
    app = create_app(ScriptedAgent(), card(), forwarded_allow_ips=allowed)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        got = (await http.get("/.well-known/agent-card.json", headers=forwarded)).json()
    expected = "https://evil.example/" if believed else "http://agent.test/"
    assert got["url"] == expected
