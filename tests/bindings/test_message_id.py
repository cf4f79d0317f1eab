"""``messageId`` is required on every binding, and the same error says so (spec 6.4:
``messageId`` is required; 3.4.1: every binding handles errors alike). An empty one
would let two different messages pass for a repeat of each other."""

from __future__ import annotations

import json
from typing import Any

import grpc
import httpx
import pytest

from parley._proto import a2a_pb2
from parley.protocol.protobuf import ERROR_METADATA
from tests.bindings.conftest import Served

REQUIRED = "messageId is required"


@pytest.mark.parametrize("message_id", ["", None])
async def test_jsonrpc(served: Served, message_id: str | None) -> None:
    message: dict[str, Any] = {"role": "user", "parts": [{"kind": "text", "text": "echo hi"}]}
    if message_id is not None:
        message["messageId"] = message_id
    request = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    async with httpx.AsyncClient(base_url=served.base) as http:
        answer = (await http.post("/", json=request)).json()
    assert answer["error"]["code"] == -32602
    if message_id == "":  # a missing one is refused by the schema, naming the field
        assert REQUIRED in answer["error"]["message"]


@pytest.mark.parametrize("message_id", ["", None])
async def test_rest(served: Served, message_id: str | None) -> None:
    message: dict[str, Any] = {"role": "ROLE_USER", "content": [{"text": "echo hi"}]}
    if message_id is not None:
        message["messageId"] = message_id
    async with httpx.AsyncClient(base_url=served.base) as http:
        response = await http.post("/v1/message:send", json={"message": message})
    assert response.status_code == 400
    assert response.json()["code"] == -32602
    assert REQUIRED in response.json()["message"]


async def test_grpc(served: Served) -> None:
    request = a2a_pb2.SendMessageRequest(
        request=a2a_pb2.Message(role=a2a_pb2.ROLE_USER, content=[a2a_pb2.Part(text="echo hi")])
    )
    async with grpc.aio.insecure_channel(f"127.0.0.1:{served.app.grpc_port}") as channel:
        send = channel.unary_unary(
            "/a2a.v1.A2AService/SendMessage",
            request_serializer=a2a_pb2.SendMessageRequest.SerializeToString,
            response_deserializer=a2a_pb2.SendMessageResponse.FromString,
        )
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await send(request)
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    metadata: dict[str, Any] = dict(raised.value.trailing_metadata() or ())  # type: ignore[arg-type]
    error = json.loads(metadata[ERROR_METADATA])
    assert error["code"] == -32602
    assert REQUIRED in error["message"]
