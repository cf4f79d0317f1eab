"""One translation of foreign exceptions for every binding (spec 8: A2A error codes):
whatever a call raises is answered with the same A2A error on JSON-RPC, REST and gRPC."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel, ValidationError

from parley.protocol import (
    A2AError,
    ConversionError,
    InternalError,
    InvalidParamsError,
    TaskNotFoundError,
)
from parley.server.bindings._errors import as_a2a_error


class _Model(BaseModel):
    count: int


def _validation_error() -> ValidationError:
    try:
        _Model.model_validate({"count": "many"})
    except ValidationError as error:
        return error
    raise AssertionError("validation passed")


def test_an_a2a_error_is_answered_as_itself() -> None:
    error = TaskNotFoundError("Task t1 was not found")
    assert as_a2a_error(error) is error


def test_a_model_that_does_not_validate_is_invalid_params_naming_the_field() -> None:
    translated = as_a2a_error(_validation_error())
    assert isinstance(translated, InvalidParamsError)
    assert "count" in translated.message
    assert "many" not in translated.message  # the input is never echoed


def test_a_proto_message_parley_cannot_map_is_invalid_params() -> None:
    translated = as_a2a_error(ConversionError("a Message has no role"))
    assert isinstance(translated, InvalidParamsError)
    assert translated.message == "Invalid request: a Message has no role"


def test_anything_else_is_an_internal_error_whose_text_stays_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="parley.server"):
        translated = as_a2a_error(RuntimeError("secret path /etc/x"))
    assert isinstance(translated, InternalError)
    assert "secret" not in translated.message
    assert "secret path /etc/x" in caplog.text


@pytest.mark.parametrize("data", [None, {"field": "x"}])
def test_the_error_body_is_the_same_json_on_every_binding(data: object) -> None:
    body = A2AError.from_code(-32001, "gone", data).body()
    expected = b'{"code":-32001,"message":"gone"' + (b',"data":{"field":"x"}}' if data else b"}")
    assert body == expected
