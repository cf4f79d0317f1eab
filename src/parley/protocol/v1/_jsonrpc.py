"""v1.0's JSON-RPC methods (v1.0.1 §9) as a dialect of the JSON-RPC binding's hook
(``parley.protocol.Dialect``): ``SendMessage``, ``GetTask``, ``ListTasks``, ... with
ProtoJSON params and results, errors with v0.3's codes and an ``ErrorInfo`` in ``data``.
Selected by ``A2A-Version: 1.0`` or, without a version, by its method names (no other
dialect has them)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json

from parley.protocol._dialect import Dialect, DialectMethod
from parley.protocol._errors import A2AError, ConversionError, InvalidParamsError, shorten
from parley.protocol._versions import V1_0
from parley.protocol.v1._errors import jsonrpc_error
from parley.protocol.v1._operations import (
    V1_OPERATIONS,
    V1Operation,
    decode_request,
    encode_json,
)
from parley.protocol.v1._requests import tenant_of


def _method(operation: V1Operation) -> DialectMethod:
    name = operation.jsonrpc_method

    def decode(params: Any) -> Any:
        if params is not None and not isinstance(params, dict):
            raise InvalidParamsError(f"{name} takes a params object")
        try:
            return decode_request(operation, params or {})
        except ConversionError as error:
            raise InvalidParamsError(
                f"Invalid params for {name}: {shorten(str(error), 200)}"
            ) from None
        except ValidationError as error:
            raise InvalidParamsError.from_validation(name, error) from None

    def encode(result: Any, params: Any = None) -> bytes:
        return encode_json(operation, result)

    return DialectMethod(operation.core, decode, encode)


def _encode_error(error: A2AError) -> bytes:
    data: bytes = to_json(jsonrpc_error(error))
    return data


DIALECT = Dialect(
    name=V1_0,
    methods={operation.jsonrpc_method: _method(operation) for operation in V1_OPERATIONS},
    encode_error=_encode_error,
    versions=(V1_0,),
    tenant_of=tenant_of,
    protocol_version=V1_0,
)
"""A2A v1.0 on the JSON-RPC binding."""
