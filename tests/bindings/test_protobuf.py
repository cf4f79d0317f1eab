"""Converters between parley's types and a2a.proto (spec 3.2.2: the normative proto; 3.4.1
equivalence): every operation's params and result survive a trip through protobuf,
binary and proto-JSON alike, for every message type of the proto."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.protocol import OPERATIONS, Operation
from parley.protocol.protobuf import PROTO_OPERATIONS, ConversionError, from_json, pb, to_json
from parley.protocol.protobuf._core import parse_name
from parley.types import (
    FilePart,
    FileWithBytes,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Role,
    TaskQueryParams,
    TextPart,
)
from tests.bindings.strategies import PARAMS, RESULTS

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BY_NAME = {op.name: op for op in OPERATIONS}


def _through_proto(value: Any, to: Any, back: Any, message_class: Any) -> tuple[Any, Any]:
    proto = to(value)
    binary = message_class.FromString(proto.SerializeToString())
    via_json = from_json(to_json(proto), message_class)
    return back(binary), back(via_json)


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.name)
@SETTINGS
@given(data=st.data())
def test_params_round_trip(operation: Operation, data: st.DataObject) -> None:
    params = data.draw(PARAMS[operation.name])
    proto_op = PROTO_OPERATIONS[operation.name]
    binary, via_json = _through_proto(
        params, proto_op.params_to_proto, proto_op.params_from_proto, proto_op.request
    )
    assert binary == params
    assert via_json == params


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.name)
@SETTINGS
@given(data=st.data())
def test_result_round_trip(operation: Operation, data: st.DataObject) -> None:
    result = data.draw(RESULTS[operation.name])
    proto_op = PROTO_OPERATIONS[operation.name]
    binary, via_json = _through_proto(
        result, proto_op.result_to_proto, proto_op.result_from_proto, proto_op.response
    )
    assert binary == result
    assert via_json == result


def _reachable(descriptor: Any, seen: set[str]) -> None:
    if descriptor.full_name in seen or not descriptor.full_name.startswith("a2a.v1."):
        return
    seen.add(descriptor.full_name)
    for field in descriptor.fields:
        if field.message_type is not None:
            _reachable(field.message_type, seen)


def test_every_proto_message_is_converted() -> None:
    seen: set[str] = set()
    for proto_op in PROTO_OPERATIONS.values():
        _reachable(proto_op.request.DESCRIPTOR, seen)
        _reachable(proto_op.response.DESCRIPTOR, seen)
    every = {f"a2a.v1.{name}" for name in pb.DESCRIPTOR.message_types_by_name}
    # map entries (e.g. AgentCard.SecuritySchemesEntry) are nested types, not listed above
    assert every <= seen


def test_history_length_zero_means_no_limit() -> None:
    """a2a.proto: "if 0, the history will be unlimited"; proto3 cannot say "not given"."""
    proto_op = PROTO_OPERATIONS["get_task"]
    params = proto_op.params_from_proto(pb.GetTaskRequest(name="tasks/t1"))
    assert params == TaskQueryParams(id="t1")


def test_configuration_without_blocking_is_sent_blocking() -> None:
    """Spec 7.1: blocking is the default when the client does not say."""
    message = Message(message_id="m", role=Role.user, parts=[TextPart(text="hi")])
    params = MessageSendParams(message=message, configuration=MessageSendConfiguration())
    proto = PROTO_OPERATIONS["send_message"].params_to_proto(params)
    assert proto.configuration.blocking is True


def test_file_bytes_carry_the_base64_text_like_the_official_sdk() -> None:
    part = FilePart(file=FileWithBytes(bytes="aGVsbG8=", mime_type="text/plain"))
    message = Message(message_id="m", role=Role.user, parts=[part])
    proto = PROTO_OPERATIONS["send_message"].params_to_proto(MessageSendParams(message=message))
    assert proto.request.content[0].file.file_with_bytes == b"aGVsbG8="


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("tasks/abc", ("abc", None)),
        ("abc", ("abc", None)),
        ("tasks/abc/pushNotificationConfigs/c1", ("abc", "c1")),
    ],
)
def test_resource_names(name: str, expected: tuple[str, str | None]) -> None:
    assert parse_name(name) == expected


@pytest.mark.parametrize("name", ["", "other/abc/def"])
def test_bad_resource_names(name: str) -> None:
    with pytest.raises(ConversionError):
        parse_name(name)


def test_empty_oneofs_are_refused() -> None:
    with pytest.raises(ConversionError):
        PROTO_OPERATIONS["stream_message"].result_from_proto(pb.StreamResponse())
    with pytest.raises(ConversionError):
        PROTO_OPERATIONS["send_message"].result_from_proto(pb.SendMessageResponse())
