"""Decoding an operation's result from wire JSON into parley types, for every transport.

Driven by the operation table's ``result`` column; the adapters are built once.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from parley.protocol import OPERATIONS, InvalidAgentResponseError, Operation
from parley.types import Event

_EVENT: TypeAdapter[Any] = TypeAdapter(Event)
_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    op.name: _EVENT if op.streaming else TypeAdapter(op.result) for op in OPERATIONS
}


def decode_result(operation: Operation, value: Any) -> Any:
    """``value`` (parsed JSON) as the operation's result type; for a stream, one event.

    Raises ``InvalidAgentResponseError`` naming what does not fit.
    """
    try:
        return _ADAPTERS[operation.name].validate_python(value)
    except ValidationError as error:
        raise InvalidAgentResponseError(_summary(operation, error)) from None


def decode_result_json(operation: Operation, data: bytes | str) -> Any:
    """Like ``decode_result``, straight from JSON bytes (one validation, no dict detour)."""
    try:
        return _ADAPTERS[operation.name].validate_json(data)
    except ValidationError as error:
        raise InvalidAgentResponseError(_summary(operation, error)) from None


def _summary(operation: Operation, error: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in item['loc']) or 'result'}: {item['msg']}"
        for item in error.errors(include_url=False, include_input=False)[:3]
    )
    return f"The agent's answer to {operation.jsonrpc_method} is not valid: {problems}"
