"""The JSON-RPC binding answers the same with the speed seam's request reader
(``parley._speedups.jsonrpc``) as without it: the same status, headers and body (the ids
and times the server makes aside), for the requests the reader takes and for ones it
leaves to the plain way."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from parley._speedups import enabled
from tests.server.agents import scripted_app
from tests.speedups import plain

pytestmark = pytest.mark.skipif(not enabled(), reason="PARLEY_SPEEDUPS=0: the plain path")

_MADE = re.compile(
    rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    rb"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(?:\+00:00|Z)"
)
"""The ids and timestamps the server makes, which differ between two runs."""


def _v03(method: str, params: Any, request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _message(text: str, **more: Any) -> dict[str, Any]:
    return {"kind": "message", "messageId": "m-1", "role": "user", "parts": [
        {"kind": "text", "text": text}
    ], **more}  # fmt: skip


def _v1_message(text: str) -> dict[str, Any]:
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}


V1 = {"A2A-Version": "1.0"}
_REQUESTS: list[tuple[dict[str, str], dict[str, Any]]] = [
    ({}, _v03("message/send", {"message": _message("echo hello")})),
    ({}, _v03("message/send", {"message": _message("reply hi")}, "s-1")),
    ({}, _v03("message/stream", {"message": _message("chunks 3")})),
    ({}, _v03("message/send", {"message": _message("boom")})),
    ({}, _v03("tasks/get", {"id": "no-such-task"}, None)),
    ({}, _v03("tasks/get", {"id": 5})),
    ({}, _v03("message/send", {"message": {**_message("x"), "parts": []}})),
    ({"A2A-Version": "0.3"}, _v03("message/send", {"message": _message("echo hi")})),
    (V1, _v03("SendMessage", {"message": _v1_message("echo hello")})),
    (V1, _v03("SendStreamingMessage", {"message": _v1_message("chunks 2")}, "s")),
    (V1, _v03("SendMessage", {"message": _v1_message("echo t"), "tenant": "acme"})),
    (V1, _v03("SendMessage", {"message": {**_v1_message("x"), "role": 7.5}})),
    (V1, _v03("GetTask", {"id": "no-such-task"})),
]


async def _answers() -> list[tuple[int, str, bytes]]:
    app, _ = scripted_app()
    answers = []
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        for headers, body in _REQUESTS:
            response = await http.post("/", content=json.dumps(body), headers={
                "content-type": "application/json", **headers
            })  # fmt: skip
            made = _MADE.sub(b"<made>", response.content)
            answers.append((response.status_code, response.headers["content-type"], made))
    await app.handler.aclose()
    return answers


async def test_the_binding_answers_the_same_either_way() -> None:
    fast = await _answers()
    with plain():
        plainly = await _answers()
    for (headers, body), one, other in zip(_REQUESTS, fast, plainly, strict=True):
        assert one == other, (headers, body)
