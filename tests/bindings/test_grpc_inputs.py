"""gRPC requests that protobuf accepts but JSON cannot express are invalid params
(``INVALID_ARGUMENT``) naming the field, on both services, never ``INTERNAL``
(docs/bindings.md "Wire forms"): a timestamp out of RFC 3339's range, NaN or an infinity
in a ``Struct``, a ``Value`` of no kind, bytes that are not UTF-8 in a string."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest

from parley.protocol.protobuf import pb
from parley.protocol.v1 import pb1
from tests.bindings.conftest import Served

V03 = "a2a.v1.A2AService"
V10 = "lf.a2a.v1.A2AService"


def _v03_send(build: Callable[[Any], None]) -> bytes:
    request = pb.SendMessageRequest()
    request.request.message_id = "m-grpc-input"
    request.request.role = pb.ROLE_USER
    request.request.content.add().text = "echo hi"
    build(request)
    data: bytes = request.SerializeToString()
    return data


def _v1_send(build: Callable[[Any], None]) -> bytes:
    request = pb1.SendMessageRequest()
    request.message.message_id = "m-grpc-input"
    request.message.role = pb1.ROLE_USER
    request.message.parts.add().text = "echo hi"
    build(request)
    data: bytes = request.SerializeToString()
    return data


def _v1_list_after(seconds: int, nanos: int = 0) -> bytes:
    request = pb1.ListTasksRequest()
    request.status_timestamp_after.seconds = seconds
    request.status_timestamp_after.nanos = nanos
    data: bytes = request.SerializeToString()
    return data


def _unset_value(request: Any) -> None:
    request.metadata.fields["x"].SetInParent()  # a Value whose kind oneof is unset


def _unset_value_in_list(request: Any) -> None:
    request.metadata.fields["x"].list_value.values.add()


def _data_part(value: float) -> Callable[[Any], None]:
    def build(request: Any) -> None:
        if hasattr(request, "request"):
            request.request.content.add().data.data.update({"x": value})
        else:
            request.message.parts.add().data.struct_value.update({"x": value})

    return build


CASES = [
    pytest.param(
        V10, "ListTasks", _v1_list_after(2**62), "status_timestamp_after", id="v1-time-range"
    ),
    pytest.param(V10, "ListTasks", _v1_list_after(0, -5), "status_timestamp_after", id="v1-nanos"),
    pytest.param(
        V10,
        "SendMessage",
        _v1_send(lambda r: r.metadata.update({"x": float("nan")})),
        "metadata",
        id="v1-nan-metadata",
    ),
    pytest.param(V10, "SendMessage", _v1_send(_data_part(float("inf"))), "data", id="v1-inf-data"),
    pytest.param(
        V03,
        "SendMessage",
        _v03_send(lambda r: r.metadata.update({"x": float("nan")})),
        "metadata",
        id="v03-nan-metadata",
    ),
    pytest.param(
        V03, "SendMessage", _v03_send(_data_part(float("-inf"))), "data", id="v03-inf-data"
    ),
    pytest.param(V03, "SendMessage", _v03_send(_unset_value), "metadata", id="v03-unset-value"),
    pytest.param(
        V03, "SendMessage", _v03_send(_unset_value_in_list), "metadata", id="v03-unset-in-list"
    ),
    pytest.param(
        V03,
        "SendMessage",
        _v03_send(lambda r: r.request.metadata.update({"n": float("nan")})),
        "metadata",
        id="v03-nan-message-metadata",
    ),
]


@pytest.mark.parametrize(("service", "method", "request_bytes", "field"), CASES)
async def test_what_json_cannot_express_is_invalid_argument(
    served: Served, service: str, method: str, request_bytes: bytes, field: str
) -> None:
    failure = await _call(served, service, method, request_bytes)
    assert failure.code() is grpc.StatusCode.INVALID_ARGUMENT, failure.details()
    details = failure.details() or ""
    assert details.startswith("InvalidParamsError"), details
    assert field in details


@pytest.mark.parametrize("service", [V03, V10])
@pytest.mark.parametrize("bad", [b"\xed\xa0\x80", b"\xff\xfe", b"\xc0\x80"])
async def test_strings_that_are_not_utf8_are_invalid_argument(
    served: Served, service: str, bad: bytes
) -> None:
    marked = (_v03_send if service == V03 else _v1_send)(lambda r: None)
    request_bytes = marked.replace(b"m-grpc-input", bad + b"m-grpc-input"[len(bad) :])
    failure = await _call(served, service, "SendMessage", request_bytes)
    assert failure.code() is grpc.StatusCode.INVALID_ARGUMENT


async def _call(served: Served, service: str, method: str, request: bytes) -> grpc.aio.AioRpcError:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{served.app.grpc_port}") as channel:
        call = channel.unary_unary(
            f"/{service}/{method}", request_serializer=None, response_deserializer=None
        )
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await call(request)
    return raised.value
