"""A2A errors as ``google.rpc.Status`` with a ``google.rpc.ErrorInfo`` (v1.0.1 §3.3.2, §9.5,
§10.6, §11.6), and back.

Every binding carries the same ``ErrorInfo``: ``reason`` is the error class's ``reason``
(``TASK_NOT_FOUND``), ``domain`` is ``a2a-protocol.org``. HTTP+JSON answers with the
Status's ProtoJSON under ``error``; JSON-RPC keeps its numeric ``code`` and puts the
details in ``data``; gRPC sends the binary Status as the ``grpc-status-details-bin``
trailer (on v0.3 calls too: a v0.3 client ignores it, a v1.0 client reads it).
"""

from __future__ import annotations

import json
from typing import Any

from google.rpc import code_pb2

from parley.protocol._errors import A2AError
from parley.protocol.v1._load import any_pb2, error_details_pb2, status_pb2

DOMAIN = "a2a-protocol.org"
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
STATUS_DETAILS_METADATA = "grpc-status-details-bin"


def error_info(error: A2AError) -> dict[str, Any]:
    """The error's ``ErrorInfo`` in ProtoJSON (an ``Any``: with its ``@type``)."""
    return {"@type": ERROR_INFO_TYPE, "reason": error.reason, "domain": DOMAIN}


def rest_error_body(error: A2AError) -> bytes:
    """The v1.0 HTTP+JSON error body (sent with ``error.v1_http_status``)."""
    body = {
        "error": {
            "code": error.v1_http_status,
            "status": error.v1_grpc_status,
            "message": error.message,
            "details": [error_info(error)],
        }
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def jsonrpc_error(error: A2AError) -> dict[str, Any]:
    """The v1.0 JSON-RPC ``error`` member: the code of v0.3, details in ``data``."""
    return {"code": error.code, "message": error.message, "data": [error_info(error)]}


def grpc_details(error: A2AError) -> str:
    """The details string of a gRPC error: ``"<ErrorClass>: <message>"``, as the official
    SDK writes it (and reads it back when there is nothing richer)."""
    return f"{type(error).__name__}: {error.message}"


def status_details(error: A2AError, grpc_status: str | None = None) -> bytes:
    """The binary ``google.rpc.Status`` of ``grpc-status-details-bin``; its code and
    message must be the call's (``grpc_status``, v1.0's by default; ``grpc_details``), as
    clients (grpcio-status's ``from_call``) refuse a Status that disagrees with them."""
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.ErrorInfo(reason=error.reason, domain=DOMAIN))
    code = code_pb2.Code.Value(grpc_status or error.v1_grpc_status)
    status = status_pb2.Status(code=code, message=grpc_details(error), details=[detail])
    data: bytes = status.SerializeToString()
    return data


def error_from_status_details(data: bytes) -> A2AError | None:
    """The A2A error a binary ``google.rpc.Status`` names, if its ``ErrorInfo`` does."""
    try:
        status = status_pb2.Status.FromString(data)
    except Exception:  # a peer's garbage; the caller falls back to the status code
        return None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Is(info.DESCRIPTOR) and detail.Unpack(info) and info.domain == DOMAIN:
            name, colon, rest = status.message.partition(": ")
            message = rest if colon and name.endswith("Error") else status.message
            return A2AError.from_reason(info.reason, message or None)
    return None


def error_from_status_json(body: Any) -> A2AError | None:
    """The A2A error of a v1.0 HTTP+JSON error body (``{"error": {...}}``), if it is one."""
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return None
    status = body["error"]
    message = status.get("message") if isinstance(status.get("message"), str) else None
    reason = reason_of(status.get("details"))
    if reason is not None:
        found = A2AError.from_reason(reason, message)
        if found is not None:
            return found
    return None


def reason_of(details: Any) -> str | None:
    """The ``reason`` of the first A2A ``ErrorInfo`` in a ProtoJSON details list."""
    for detail in details if isinstance(details, list) else ():
        if (
            isinstance(detail, dict)
            and detail.get("@type") == ERROR_INFO_TYPE
            and detail.get("domain", DOMAIN) == DOMAIN
            and isinstance(detail.get("reason"), str)
        ):
            return str(detail["reason"])
    return None
