"""Bytes that are not the operation's message get the protocol's parse error on every
binding (spec 3.4.1: same error handling; 8.1: -32700 for a body that does not parse),
never an internal error or the decoder's own text."""

from __future__ import annotations

import json
from typing import Any

import grpc
import httpx
import pytest

from parley.protocol.protobuf import ERROR_METADATA
from tests.bindings.conftest import Served

JSON = {"content-type": "application/json"}
V1 = {"A2A-Version": "1.0"}


async def test_jsonrpc_body_that_is_not_json(served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.base, headers=JSON) as http:
        response = await http.post("/", content=b"{not json")
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32700


async def test_rest_body_that_is_not_json(served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.base, headers=JSON) as http:
        response = await http.post("/v1/message:send", content=b"{not json")
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["code"] == -32700
    assert body["message"].startswith("Invalid JSON payload")


async def test_rest_json_that_does_not_fit_stays_invalid_params(served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.base, headers=JSON) as http:
        response = await http.post("/v1/message:send", json={"message": {"role": 7.5}})
    assert response.status_code == 400
    assert response.json()["code"] == -32602


async def test_grpc_request_that_is_not_protobuf(served: Served) -> None:
    port = served.app.grpc_port
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        send = channel.unary_unary(
            "/a2a.v1.A2AService/SendMessage",
            request_serializer=None,
            response_deserializer=None,
        )
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await send(b"\xff\xff\xff")
    failure = raised.value
    assert failure.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert (failure.details() or "").startswith("JSONParseError: The request is not a valid ")
    metadata: dict[str, Any] = dict(failure.trailing_metadata() or ())  # type: ignore[arg-type]
    assert json.loads(metadata[ERROR_METADATA])["code"] == -32700


async def test_grpc_stream_request_that_is_not_protobuf(served: Served) -> None:
    port = served.app.grpc_port
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        subscribe = channel.unary_stream(
            "/a2a.v1.A2AService/TaskSubscription",
            request_serializer=None,
            response_deserializer=None,
        )
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await subscribe(b"\xff\xff\xff").read()
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT


async def test_rest_query_value_that_is_not_a_number_is_not_echoed(served: Served) -> None:
    secret = "x" * 50 + "<script>"
    async with httpx.AsyncClient(base_url=served.base, headers=JSON) as http:
        response = await http.get(f"/v1/tasks/some-task?historyLength={secret}")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == -32602
    assert body["message"] == "historyLength must be a whole number"
    assert "script" not in response.text


async def test_bodies_that_are_not_utf8_are_parse_errors(served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.base, headers=JSON) as http:
        over_jsonrpc = await http.post("/", content=b"\xff\xfe{")
        over_rest = await http.post("/v1/message:send", content=b"\xff\xfe{")
    assert over_jsonrpc.json()["error"]["code"] == -32700
    assert over_rest.status_code == 400
    assert over_rest.json()["code"] == -32700


LONE_SURROGATES = [
    '{"message":{"messageId":"m","role":"ROLE_USER","content":"\\ud800"}}',
    '{"message":{"messageId":"\\udfff","role":"ROLE_USER","content":[{"text":"\\ud800"}]}}',
    '{"message":{"messageId":"m","role":"\\ud800x","content":[]}}',
]


@pytest.mark.parametrize("body", LONE_SURROGATES)
async def test_errors_quoting_a_lone_surrogate_are_written(served: Served, body: str) -> None:
    """A JSON string may escape a lone surrogate (RFC 8259 §8.2); an error message that
    quotes one is still written as valid UTF-8 JSON, never a plain-text 500."""
    async with httpx.AsyncClient(base_url=served.base, headers=JSON) as http:
        rest = await http.post("/v1/message:send", content=body)
        rest_v1 = await http.post(
            "/message:send", content=body.replace("content", "parts"), headers=V1
        )
    assert rest.status_code == 400, rest.text
    assert rest.headers["content-type"] == "application/json"
    assert rest.json()["code"] in (-32700, -32602)
    assert rest_v1.status_code == 400, rest_v1.text
    assert rest_v1.json()["error"]["status"] == "INVALID_ARGUMENT"
