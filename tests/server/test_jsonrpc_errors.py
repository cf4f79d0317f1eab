"""The JSON-RPC envelope and its errors (spec 6.11, 8.1, 8.2)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from parley.server.bindings._jsonrpc import success
from tests.server.rpc import body, user_message


async def post_raw(client: httpx.AsyncClient, content: bytes) -> httpx.Response:
    return await client.post("/", content=content, headers={"content-type": "application/json"})


async def test_broken_json_is_a_parse_error_with_null_id(client: httpx.AsyncClient) -> None:
    """Spec 8.1: -32700 for JSON that is not well-formed; the id cannot be read."""
    response = await post_raw(client, b'{"jsonrpc": "2.0", "id": 7, "method": ')
    assert response.status_code == 200
    answer = response.json()
    assert answer["id"] is None
    assert answer["error"]["code"] == -32700


@pytest.mark.parametrize(
    ("request_body", "expected_id"),
    [
        (b'{"jsonrpc": "1.0", "id": 3, "method": "tasks/get", "params": {"id": "x"}}', 3),
        (b'{"id": 4, "method": "tasks/get", "params": {"id": "x"}}', 4),
        (b'{"jsonrpc": "2.0", "id": 5, "params": {}}', 5),
        (b'{"jsonrpc": "2.0", "id": 6, "method": 12}', 6),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tasks/get", "params": {"id": "x"}}', None),
        (b'{"jsonrpc": "2.0", "id": true, "method": "tasks/get", "params": {"id": "x"}}', None),
        (b"[1, 2]", None),
    ],
)
async def test_invalid_requests_get_32600(
    client: httpx.AsyncClient, request_body: bytes, expected_id: object
) -> None:
    """Spec 8.1: -32600 for a wrong jsonrpc, a missing method, an id that is an object."""
    answer = (await post_raw(client, request_body)).json()
    assert answer["error"]["code"] == -32600
    assert answer["id"] == expected_id


async def test_unknown_method_is_32601_with_id_echoed(client: httpx.AsyncClient) -> None:
    """Spec 8.1: -32601 for a method that does not exist."""
    answer = (await client.post("/", json=body("tasks/frobnicate", {}, "abc"))).json()
    assert answer == {
        "jsonrpc": "2.0",
        "id": "abc",
        "error": {"code": -32601, "message": "Method not found: tasks/frobnicate"},
    }


def _without(field: str) -> dict[str, object]:
    message = user_message("hi")
    del message[field]
    return message


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (_without("messageId"), "messageId"),
        (_without("role"), "role"),
        (_without("parts"), "parts"),
        ({**user_message("hi"), "parts": []}, "parts"),
        ({**user_message("hi"), "parts": [{"text": "no kind"}]}, "parts.0"),
        ({**user_message("hi"), "parts": [{"kind": "video", "url": "x"}]}, "parts.0"),
        ({**user_message("hi"), "role": "robot"}, "role"),
        ({**user_message("hi"), "messageId": 42}, "messageId"),
    ],
)
async def test_bad_params_are_32602_naming_the_field(
    client: httpx.AsyncClient, message: dict[str, object], field: str
) -> None:
    """Spec 8.1: -32602 for invalid params; the message says which field and why."""
    answer = (await client.post("/", json=body("message/send", {"message": message}, 9))).json()
    assert answer["id"] == 9
    assert answer["error"]["code"] == -32602
    assert f"message.{field}" in answer["error"]["message"]
    assert "Traceback" not in answer["error"]["message"]


async def test_missing_params_is_32602(client: httpx.AsyncClient) -> None:
    answer = (await client.post("/", json=body("tasks/get", None, 2))).json()
    assert answer["error"]["code"] == -32602
    assert answer["id"] == 2


async def test_wrong_type_in_params_is_32602(client: httpx.AsyncClient) -> None:
    answer = (await client.post("/", json=body("tasks/get", {"id": ["x"]}, 2))).json()
    assert answer["error"]["code"] == -32602
    assert "id" in answer["error"]["message"]


def test_empty_result_is_an_explicit_null() -> None:
    """Spec 6.11: a success response always has a result member, null when empty."""
    assert success(5, None) == b'{"jsonrpc":"2.0","id":5,"result":null}'


async def test_large_body_is_refused_before_parsing(
    app_and_agent: tuple[object, object],
) -> None:
    """A body over the configured limit is refused while it is read (HTTP 413)."""
    from parley.server import create_app
    from tests.server.agents import ScriptedAgent, card

    app = create_app(ScriptedAgent(), card(), max_body_size=1000)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        big = body("message/send", {"message": user_message("x" * 5000)})
        response = await http.post("/", json=big)
        assert response.status_code == 413
        assert response.json()["error"]["code"] == -32600
        assert "1000 bytes" in response.json()["error"]["message"]
        small = await http.post("/", json=body("tasks/get", {"id": "nope"}))
        assert small.json()["error"]["code"] == -32001


async def test_get_is_not_a_jsonrpc_call(client: httpx.AsyncClient) -> None:
    response = await client.get("/")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


async def _asgi_post(app: Any, pieces: list[bytes]) -> tuple[int, bytes]:
    """POST ``pieces`` to the app as that many ``http.request`` messages, with no
    Content-Length (as a chunked upload): the status and the body of the answer."""
    messages = [
        {"type": "http.request", "body": piece, "more_body": n < len(pieces) - 1}
        for n, piece in enumerate(pieces)
    ]
    answer: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        else:
            answer["body"] += message.get("body", b"")

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "root_path": "",
        "scheme": "http",
        "query_string": b"",
        "headers": [(b"host", b"agent.test"), (b"content-type", b"application/json")],
        "client": ("10.1.2.3", 5000),
        "server": ("agent.test", 80),
    }
    await app(scope, receive, send)
    return answer["status"], answer["body"]


@pytest.mark.parametrize("pieces", [1, 3])
async def test_a_body_without_its_length_is_read_whole_and_held_to_the_limit(
    pieces: int,
) -> None:
    """Without Content-Length the limit is checked on what arrives, in one message or
    several; a body within it is read whole, whatever the number of messages."""
    from parley.server import create_app
    from tests.server.agents import ScriptedAgent, card

    app = create_app(ScriptedAgent(), card(), max_body_size=1000)

    def cut(request: dict[str, object]) -> list[bytes]:
        data = json.dumps(request).encode()
        size = len(data)
        return [data[n * size // pieces : (n + 1) * size // pieces] for n in range(pieces)]

    status, answer = await _asgi_post(app, cut(body("tasks/get", {"id": "nope"})))
    assert (status, json.loads(answer)["error"]["code"]) == (200, -32001)
    # refused unread: the answer cannot name the request's id
    big = body("message/send", {"message": user_message("x" * 5000)}, request_id=None)
    status, answer = await _asgi_post(app, cut(big))
    assert status == 413
    assert "1000 bytes" in json.loads(answer)["error"]["message"]
