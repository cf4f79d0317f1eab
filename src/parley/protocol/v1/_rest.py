"""v1.0's HTTP+JSON dialect (v1.0.1 §11): its paths (``/message:send``, ``/tasks/{id}``,
``/tasks`` for ListTasks, ...), each also under ``/{tenant}/``.

A request is read as ProtoJSON: the body (POST), the query (GET: ``historyLength``,
``contextId``, ``status``, ``pageSize``, ``pageToken``, ...; §11.5) and the path
parameters fill the operation's request message, which becomes the core params. Results
are ProtoJSON, sent as ``application/a2a+json``; streams carry one ``StreamResponse``
per event. Errors answer with the v1.0 status of the error class and the
``google.rpc.Status`` body (``{"error": {code, status, message, details}}``, §11.6); an
error after a stream started is its last event, sent as ``event: error``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from parley.protocol._errors import A2AError, InvalidRequestError
from parley.protocol._rest import RESTDialect, RESTRoute, read_json
from parley.protocol._versions import V1_0
from parley.protocol.v1._errors import rest_error_body
from parley.protocol.v1._operations import V1_OPERATIONS, V1Operation, decode_request, encode_json
from parley.protocol.v1._requests import tenant_of

_BOOLEANS = {"true": True, "false": False}


def request_json(
    operation: V1Operation, path_params: dict[str, str], query: str, body: bytes
) -> dict[str, Any]:
    """The request message's ProtoJSON from the body, the query and the path."""
    request: dict[str, Any] = {}
    if operation.rest_method == "POST" and body.strip():
        request = read_json(body)
        if not isinstance(request, dict):
            raise InvalidRequestError("The request body must be a JSON object")
    for name, value in parse_qsl(query):
        if name.lower() != "a2a-version":
            request[name] = _BOOLEANS.get(value, value)
    for placeholder, field in operation.path_fields:
        if placeholder in path_params:
            request[field] = path_params[placeholder]
    if "tenant" in path_params:
        request["tenant"] = path_params["tenant"]
    return request


def _route(operation: V1Operation, method: str | None = None) -> RESTRoute:
    def decode(path_params: dict[str, str], query: str, body: bytes) -> tuple[Any, str | None]:
        request = request_json(operation, path_params, query, body)
        tenant = tenant_of(request)
        return decode_request(operation, request), tenant

    def encode(result: Any) -> bytes:
        return encode_json(operation, result)

    return RESTRoute(
        operation.core, method or operation.rest_method, operation.rest_path, decode, encode
    )


def _status(error: A2AError) -> int:
    return error.v1_http_status


REST_V1_0 = RESTDialect(
    version=V1_0,
    routes=(
        *(_route(operation) for operation in V1_OPERATIONS),
        # v1.0.1 §11.3.2 subscribes with POST, the proto's HTTP rule with GET: both are served
        *(_route(op, "POST") for op in V1_OPERATIONS if op.name == "resubscribe"),
    ),
    encode_error=rest_error_body,
    status=_status,
    media_type=b"application/a2a+json",
    tenant_paths=True,
    error_event=b"error",
    label="A2A 1.0",
)
"""A2A v1.0 over HTTP+JSON: the v1.0 operation table's paths and ProtoJSON."""
