"""The error tree (spec 8) and the operation table (spec 3.5.6)."""

from __future__ import annotations

import typing

import pytest

from parley.protocol import (
    ERROR_CLASSES,
    OPERATIONS,
    A2AError,
    TaskNotFoundError,
)
from parley.server import RequestHandler
from parley.types import A2ARequest

SPEC_CODES = {
    "JSONParseError": -32700,
    "InvalidRequestError": -32600,
    "MethodNotFoundError": -32601,
    "InvalidParamsError": -32602,
    "InternalError": -32603,
    "TaskNotFoundError": -32001,
    "TaskNotCancelableError": -32002,
    "PushNotificationNotSupportedError": -32003,
    "UnsupportedOperationError": -32004,
    "ContentTypeNotSupportedError": -32005,
    "InvalidAgentResponseError": -32006,
    "AuthenticatedExtendedCardNotConfiguredError": -32007,
}


def test_every_spec_error_has_its_code() -> None:
    codes = {error.__name__: error.code for error in ERROR_CLASSES}
    for name, code in SPEC_CODES.items():
        assert codes[name] == code


@pytest.mark.parametrize("error_class", ERROR_CLASSES)
def test_errors_rebuild_from_their_code(error_class: type[A2AError]) -> None:
    rebuilt = A2AError.from_code(error_class.code, "said", {"k": 1})
    assert type(rebuilt) is error_class
    assert rebuilt.message == "said"
    assert rebuilt.data == {"k": 1}
    assert 400 <= error_class.http_status < 600
    assert error_class.grpc_status.isupper()


def test_unknown_code_keeps_the_code() -> None:
    error = A2AError.from_code(-32099, "custom")
    assert type(error) is A2AError
    assert error.code == -32099


def test_default_messages_are_the_spec_ones() -> None:
    assert TaskNotFoundError().message == "Task not found"


def test_every_operation_has_a_handler_method_and_a_jsonrpc_request() -> None:
    request_union = typing.get_args(typing.get_args(A2ARequest)[0])
    methods = {
        typing.get_args(model.model_fields["method"].annotation)[0] for model in request_union
    }
    for operation in OPERATIONS:
        assert callable(getattr(RequestHandler, operation.name))
        assert operation.jsonrpc_method in methods
    assert len(OPERATIONS) == len(methods) == 10
