"""A2A v1.0 on the HTTP+JSON binding (v1.0.1 §11): its paths beside v0.3's ``/v1/...``.
(v1.0's JSON-RPC methods are a dialect of the JSON-RPC binding: ``parley.protocol.v1``.)

Routes come from the v1.0 operation table (``parley.protocol.v1``): ``POST /message:send``,
``GET /tasks/{id}``, ``GET /tasks`` (ListTasks), ..., each also under ``/{tenant}/``.
A request is read as ProtoJSON: the body (POST), the query (GET: ``historyLength``,
``contextId``, ``status``, ``pageSize``, ``pageToken``, ...; §11.5) and the path
parameters fill the operation's request message, which becomes the core params. Results
are ProtoJSON; streams are SSE with one ``StreamResponse`` per ``data:``, the sequence
number as ``id:``. Errors answer with the v1.0 status of the error class and the
``google.rpc.Status`` body (``{"error": {code, status, message, details}}``, §11.6); an
error after a stream started is its last event, sent as ``event: error``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from starlette.types import Receive, Scope, Send

from parley.protocol import (
    A2AError,
    InvalidRequestError,
    MethodNotFoundError,
)
from parley.protocol.v1 import (
    V1_OPERATIONS,
    V1Operation,
    decode_request,
    encode_json,
    rest_error_body,
    tenant_of,
)
from parley.server.agent._context import CallContext
from parley.server.bindings._errors import as_a2a_error
from parley.server.bindings._http import (
    A2A_JSON_HEADERS,
    NOT_JSON,
    BodyTooLarge,
    ClientGone,
    call_context,
    read_body,
    read_json,
    refuses_body,
    request_headers,
    route_table,
    send_body,
    send_revalidated,
    stream_sse,
)
from parley.server.tasks._handler import RequestHandler
from parley.types import Event

_BOOLEANS = {"true": True, "false": False}

ROUTES = route_table(
    [(op.rest_path, op.rest_method, op) for op in V1_OPERATIONS]
    # v1.0.1 §11.3.2 subscribes with POST, the proto's HTTP rule with GET: both are served
    + [(op.rest_path, "POST", op) for op in V1_OPERATIONS if op.name == "resubscribe"],
    tenant=True,
)


def route(path: str) -> tuple[dict[str, V1Operation], dict[str, str]] | None:
    """The operations served at ``path`` by method, and its path parameters."""
    for pattern, methods in ROUTES:
        match = pattern.match(path)
        if match is not None:
            return methods, {k: v for k, v in match.groupdict().items() if v is not None}
    return None


async def fail(send: Send, error: A2AError, status: int | None = None) -> None:
    await send_body(send, status or error.v1_http_status, rest_error_body(error), A2A_JSON_HEADERS)


class RESTv1:
    """Serves the v1.0 HTTP+JSON paths with ``handler`` (called by ``RESTBinding``)."""

    def __init__(self, handler: RequestHandler, max_body_size: int) -> None:
        self.handler = handler
        self.max_body_size = max_body_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        found = route(path)
        if found is None:
            await fail(send, MethodNotFoundError(f"No A2A 1.0 operation at {path}"), 404)
            return
        methods, path_params = found
        operation = methods.get(scope["method"])
        if operation is None:
            allow = ", ".join(sorted(methods))
            await fail(send, InvalidRequestError(f"{path} takes {allow}"), 405)
            return
        headers = request_headers(scope)
        try:
            body = await read_body(receive, self.max_body_size, headers)
        except BodyTooLarge as too_large:
            await fail(send, InvalidRequestError(str(too_large)), 413)
            return
        except ClientGone:
            return
        if scope["method"] == "POST" and refuses_body(headers, body):
            await fail(send, InvalidRequestError(NOT_JSON), 415)
            return
        call = call_context(scope, headers)
        await self._serve(operation, path_params, scope, receive, send, body, call)

    async def _serve(
        self,
        operation: V1Operation,
        path_params: dict[str, str],
        scope: Scope,
        receive: Receive,
        send: Send,
        body: bytes,
        call: CallContext,
    ) -> None:
        call.protocol_version = "1.0"
        try:
            request = _request(operation, path_params, scope, body)
            call.tenant = tenant_of(request)
            params = decode_request(operation, request)
            result = await getattr(self.handler, operation.name)(params, call)
        except Exception as error:
            await fail(send, as_a2a_error(error))
            return
        if operation.core.name == "get_extended_card":
            body = encode_json(operation, result)
            await send_revalidated(send, call.headers, body, A2A_JSON_HEADERS)
            return
        if not operation.core.streaming:
            await send_body(send, 200, encode_json(operation, result), A2A_JSON_HEADERS)
            return

        def encode(event: Event) -> bytes:
            return encode_json(operation, event)

        def encode_error(problem: Exception) -> bytes:
            return rest_error_body(as_a2a_error(problem))

        await stream_sse(receive, send, result, encode, encode_error, error_event=b"error")


def _request(
    operation: V1Operation, path_params: dict[str, str], scope: Scope, body: bytes
) -> dict[str, Any]:
    """The request message's ProtoJSON from the body, the query and the path."""
    request: dict[str, Any] = {}
    if operation.rest_method == "POST" and body.strip():
        request = read_json(body)
        if not isinstance(request, dict):
            raise InvalidRequestError("The request body must be a JSON object")
    for name, value in parse_qsl(scope.get("query_string", b"").decode("latin-1")):
        if name.lower() != "a2a-version":
            request[name] = _BOOLEANS.get(value, value)
    for placeholder, field in operation.path_fields:
        if placeholder in path_params:
            request[field] = path_params[placeholder]
    if "tenant" in path_params:
        request["tenant"] = path_params["tenant"]
    return request
