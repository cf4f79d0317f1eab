"""The v1.0 dialect of the client's HTTP transports: request bodies and results in
ProtoJSON through ``parley.protocol.v1`` (loaded on first use: it needs protobuf), and
errors read from their ``google.rpc.ErrorInfo``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

from pydantic import ValidationError

from parley.protocol import ERROR_CLASSES, A2AError, InvalidAgentResponseError, Operation
from parley.types import A2AModel

KNOWN_CODES = frozenset(error.code for error in ERROR_CLASSES)
_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"


class V1Dialect:
    """Encodes params and decodes results of the operation table in v1.0's shapes."""

    def __init__(self, tenant: str | None = None) -> None:
        from parley.protocol import v1

        self.v1 = v1
        self.tenant = tenant
        """The ``tenant`` of every request (v1.0.1 §8.3.2: the selected interface's)."""

    def operation(self, operation: Operation) -> Any:
        return self.v1.BY_V1_NAME[operation.name]

    def request(self, operation: Operation, params: A2AModel | None) -> dict[str, Any]:
        """The request message's ProtoJSON."""
        encoded: dict[str, Any] = self.v1.encode_params(self.operation(operation), params)
        if self.tenant:
            encoded["tenant"] = self.tenant
        return encoded

    def body(self, request_id: int, operation: Operation, params: A2AModel | None) -> bytes:
        """A v1.0 JSON-RPC request."""
        envelope = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": self.operation(operation).jsonrpc_method,
            "params": self.request(operation, params),
        }
        return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()

    def result(self, operation: Operation, params: A2AModel | None, value: Any) -> Any:
        """A v1.0 result (parsed ProtoJSON) as parley types; ``InvalidAgentResponseError``
        naming what does not fit."""
        v1_operation = self.operation(operation)
        try:
            return self.v1.decode_result(v1_operation, value if value is not None else {})
        except (self.v1.ConversionError, ValidationError, ValueError, KeyError) as error:
            raise InvalidAgentResponseError(
                f"The agent's answer to {v1_operation.jsonrpc_method} is not valid: {error}"
            ) from None

    def events(self, operation: Operation, params: A2AModel | None) -> Callable[[Any], list[Any]]:
        def decode(value: Any) -> list[Any]:
            return [self.result(operation, params, value)]

        return decode

    def error(self, code: int, message: str | None, data: Any) -> A2AError:
        """The class of the code, or, for a code parley does not know, of the
        ``ErrorInfo`` reason in ``data`` (v1.0.1 §9.5)."""
        if code not in KNOWN_CODES:
            found = from_error_details(data, message)
            if found is not None:
                return found
        return A2AError.from_code(code, message, data)


def v1_dialect(tenant: str | None = None) -> V1Dialect:
    """The v1.0 dialect, sending ``tenant`` in every request when given."""
    return V1Dialect(tenant) if tenant else _v1_dialect()


@cache
def _v1_dialect() -> V1Dialect:
    return V1Dialect()


def from_error_details(details: Any, message: str | None) -> A2AError | None:
    """The error an ``ErrorInfo`` in a ProtoJSON details list names (``reason``), if any."""
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, dict) and detail.get("@type") == _INFO_TYPE:
            reason = detail.get("reason")
            if isinstance(reason, str):
                found = A2AError.from_reason(reason, message)
                if found is not None:
                    return found
    return None
