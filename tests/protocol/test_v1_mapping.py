"""The v1.0 JSON edge maps ProtoJSON <-> the core directly, without the proto messages;
these tests hold it to the proto: what it reads is what reading through the normative
``lf.a2a.v1`` message gives, what it writes parses as that message with unknown fields
refused, and bad input is refused with a conversion or validation error (never another
exception, which a binding would answer with a 500)."""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from parley._speedups import enabled
from parley._speedups.jsonrpc import read_request
from parley.protocol import ConversionError
from parley.protocol.v1 import (
    BY_V1_NAME,
    decode_request,
    decode_result,
    encode_json,
    encode_params,
    encode_result,
)
from parley.protocol.v1._data import _moment
from parley.protocol.v1._requests import send_from_v1
from parley.types import Message, MessageSendParams, Task
from tests.bindings.strategies import PARAMS, events, json_values, send_params, tasks

SEND = BY_V1_NAME["send_message"]
STREAM = BY_V1_NAME["stream_message"]
ROUND_TRIPS = [name for name in PARAMS if name in BY_V1_NAME]


def _through_proto(operation: Any, request: dict[str, Any]) -> Any:
    """The reference: the request read into its proto message first (as gRPC does)."""
    message = operation.request()
    json_format.ParseDict(request, message)
    return decode_request(operation, message)


@pytest.mark.parametrize("name", ROUND_TRIPS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_requests_read_as_through_the_proto(name: str, data: st.DataObject) -> None:
    operation = BY_V1_NAME[name]
    params = data.draw(PARAMS[name])
    request = encode_params(operation, params)
    direct = decode_request(operation, request)
    assert direct == _through_proto(operation, request)
    # ProtoJSON's other spelling: the proto field names
    message = operation.request()
    json_format.ParseDict(request, message)
    snake = json_format.MessageToDict(message, preserving_proto_field_name=True)
    assert decode_request(operation, snake) == direct


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    value = copy.deepcopy(value)
    holder = value
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = new
    return value


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_value_anywhere_is_refused_or_read(data: st.DataObject) -> None:
    """Whatever JSON value stands in for any field of a request, reading it either works
    or is refused with the errors the bindings turn into invalid params."""
    request = encode_params(SEND, data.draw(send_params))
    request["tenant"] = "t"
    path = data.draw(st.sampled_from(_paths(request)))
    bad = _replace(request, path, data.draw(json_values | st.sampled_from([[{}], {"x": 1}])))
    for operation in (SEND, STREAM):
        with contextlib.suppress(ConversionError, ValidationError):
            decode_request(operation, bad)


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"role": "ROLE_USER", "parts": [{"text": "a", "url": "b"}]}, "more than one"),
        ({"role": "ROLE_USER", "parts": [{"raw": "%%%"}]}, "base64"),
        ({"role": "ROLE_USER", "parts": [{"text": 5}]}, "text must be a string"),
        ({"role": ["ROLE_USER"], "parts": [{"text": "a"}]}, "needs a role"),
        ({"role": "ROLE_USER", "parts": {"text": "a"}}, "parts must be a list"),
        ("hello", "must be a JSON object"),
    ],
)
def test_bad_messages_name_the_problem(message: Any, problem: str) -> None:
    with pytest.raises(ConversionError, match=problem):
        decode_request(SEND, {"message": message})


def test_enums_by_number_and_urlsafe_bytes_as_protojson_reads_them() -> None:
    request = {
        "message": {"messageId": "m", "role": 2, "parts": [{"raw": "-_8", "media_type": "x/y"}]},
        "configuration": {"return_immediately": True},
    }
    params = decode_request(SEND, request)
    assert params == _through_proto(SEND, request)
    assert params.message.role == "agent"
    assert params.configuration.blocking is False


def _parses_strictly(operation: Any, data: dict[str, Any]) -> None:
    json_format.ParseDict(data, operation.response(), ignore_unknown_fields=False)


@settings(max_examples=60, deadline=None)
@given(task=tasks)
def test_results_are_protojson_of_the_response(task: Any) -> None:
    for name in ("get_task", "send_message"):
        _parses_strictly(BY_V1_NAME[name], encode_result(BY_V1_NAME[name], task))


@settings(max_examples=60, deadline=None)
@given(event=events)
def test_stream_events_are_protojson_of_stream_response(event: Any) -> None:
    _parses_strictly(STREAM, encode_result(STREAM, event))


def _normalised(wire: Any) -> Any:
    """A core object's wire form as v1.0 keeps it: times as instants, no ``final`` (read
    back from the state), empty values as unset."""
    if isinstance(wire, dict):
        return {
            key: _moment(value) if key == "timestamp" else _normalised(value)
            for key, value in wire.items()
            if key != "final" and value not in ("", [])
        }
    if isinstance(wire, list):
        return [_normalised(item) for item in wire]
    return wire


@settings(max_examples=100, deadline=None)
@given(task=tasks, event=events)
def test_what_is_written_reads_back_as_the_same_object(task: Any, event: Any) -> None:
    """The compiled writers (``_protojson``) against the client's reader, through the
    proto: a task, and every kind of stream event, come back as they were."""
    for operation, value in ((BY_V1_NAME["get_task"], task), (STREAM, event), (SEND, event)):
        if operation is SEND and not isinstance(value, Task | Message):
            continue
        back = decode_result(operation, json.loads(encode_json(operation, value)))
        assert _normalised(back.to_wire()) == _normalised(value.to_wire())
        assert json.loads(encode_json(operation, value)) == encode_result(operation, value)


def _read_from_bytes(request: Any) -> Any:
    """The speed seam's reader of SendMessage, from the request's JSON bytes; ``None``
    when it leaves the request to the slow path."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": request})
    read = read_request(body.encode(), "1.0")
    return None if read is None else read[2]


_SEAM_ON = pytest.mark.skipif(not enabled(), reason="PARLEY_SPEEDUPS=0: the plain path")


@_SEAM_ON
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_compiled_reader_reads_what_it_takes_as_the_slow_path_does(
    data: st.DataObject,
) -> None:
    """The JSON-RPC binding reads a plain SendMessage with one validation from bytes
    (``parley._speedups.jsonrpc``) and every other one through ``_requests``: on
    whatever the first accepts, anywhere a value is replaced, the two give the same
    params."""
    request = encode_params(SEND, data.draw(send_params))
    assert _read_from_bytes(request) == send_from_v1_validated(request)
    path = data.draw(st.sampled_from(_paths(request)))
    bad = _replace(request, path, data.draw(json_values | st.sampled_from([[{}], {"x": 1}, ""])))
    fast = _read_from_bytes(bad)
    if fast is not None:
        assert fast == send_from_v1_validated(bad)


@_SEAM_ON
@pytest.mark.parametrize("extra", [{"tenant": "acme"}, {"tenant": ""}, {"unknown": 1}])
def test_params_with_another_field_leave_the_compiled_reader(extra: dict[str, Any]) -> None:
    """A tenant goes into the call, which only the slow path reads: the compiled reader
    refuses any field ``MessageSendParams`` lacks, and the slow path reads the rest as
    the plain request (``tenant`` in the message's metadata is not the request's)."""
    request = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}
    assert _read_from_bytes({**request, **extra}) is None
    assert send_from_v1_validated({**request, **extra}) == _read_from_bytes(request)
    in_metadata = {**request, "metadata": extra}
    assert _read_from_bytes(in_metadata) == send_from_v1_validated(in_metadata)
    assert decode_request(SEND, {**request, **extra}) == _read_from_bytes(request)


def send_from_v1_validated(request: Any) -> Any:
    return MessageSendParams.model_validate(send_from_v1(request))
