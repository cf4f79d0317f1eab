"""The JSON-RPC 2.0 binding (spec 3.2.1, 7, 8): POST at the card's URL.

Decodes the request bytes straight into the request model of its method (one
validation, no dict detour), calls the handler method the operation table names, and
encodes the result straight to bytes. Only a request that fails validation takes the
slow path, which works out which JSON-RPC error it deserves and which ``id`` to echo.

A streaming method (``message/stream``, ``tasks/resubscribe``) always answers with an SSE
stream (spec 3.3.1, 7): an error met before the first event, from invalid params to an
unknown task, is that stream's one event. Only a request whose method is not known
(parse error, invalid request, method not found) or whose body was never read (405, 413)
gets a plain ``application/json`` error.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import to_json
from starlette.types import Receive, Scope, Send

from parley.protocol import (
    BY_JSONRPC_METHOD,
    A2AError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    MethodNotFoundError,
    Operation,
)
from parley.server._handler import RequestHandler
from parley.server.bindings._errors import as_a2a_error
from parley.server.bindings._http import (
    DEFAULT_MAX_BODY_SIZE,
    BodyTooLarge,
    ClientGone,
    call_context,
    read_body,
    send_body,
    send_sse_error,
    stream_sse,
)
from parley.types import A2ARequest, Event

_REQUEST = TypeAdapter[Any](A2ARequest)
_NO_ID = object()


def success(request_id: Any, result: Any) -> bytes:
    """A JSON-RPC success response, as bytes (``result`` is always present)."""
    return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (to_json(request_id), encode_result(result))


def failure(request_id: Any, error: A2AError) -> bytes:
    """A JSON-RPC error response, as bytes."""
    return b'{"jsonrpc":"2.0","id":%s,"error":%s}' % (to_json(request_id), error.body())


def encode_result(result: Any) -> bytes:
    if result is None:
        return b"null"
    if isinstance(result, list):
        return b"[%s]" % b",".join(item.to_json() for item in result)
    data: bytes = result.to_json()
    return data


class JSONRPCBinding:
    """The ASGI app of the JSON-RPC endpoint."""

    def __init__(
        self, handler: RequestHandler, *, max_body_size: int = DEFAULT_MAX_BODY_SIZE
    ) -> None:
        self.handler = handler
        self.max_body_size = max_body_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await send_body(
                send,
                405,
                failure(None, InvalidRequestError("JSON-RPC requests must use POST")),
                [(b"content-type", b"application/json"), (b"allow", b"POST")],
            )
            return
        try:
            body = await read_body(scope, receive, self.max_body_size)
        except BodyTooLarge as too_large:
            await send_body(send, 413, failure(None, InvalidRequestError(str(too_large))))
            return
        except ClientGone:
            return
        try:
            request = _REQUEST.validate_json(body)
        except ValidationError:
            request_id, problem, operation = diagnose(body)
            await _fail(send, operation, failure(request_id, problem))
            return
        operation = BY_JSONRPC_METHOD[request.method]
        method = getattr(self.handler, operation.name)
        call = call_context(scope)
        try:
            result = await method(request.params, call)
        except Exception as error:
            await _fail(send, operation, failure(request.id, as_a2a_error(error)))
            return
        if operation.streaming:
            request_id = request.id

            def encode(event: Event) -> bytes:
                return success(request_id, event)

            def encode_error(problem: Exception) -> bytes:
                return failure(request_id, as_a2a_error(problem))

            await stream_sse(receive, send, result, encode, encode_error)
        else:
            await send_body(send, 200, success(request.id, result))


async def _fail(send: Send, operation: Operation | None, error_response: bytes) -> None:
    """Answer with a JSON-RPC error: one SSE event for a streaming method, else JSON."""
    if operation is not None and operation.streaming:
        await send_sse_error(send, error_response)
    else:
        await send_body(send, 200, error_response)


def diagnose(body: bytes) -> tuple[Any, A2AError, Operation | None]:
    """Which error an invalid request deserves, the ``id`` to answer with (spec 8.1), and
    the operation it asked for when that much of it is valid."""
    try:
        raw = json.loads(body)
    except ValueError as error:
        return None, JSONParseError.from_decode(error), None
    if not isinstance(raw, dict):
        return None, InvalidRequestError("A JSON-RPC request must be a JSON object"), None
    request_id = raw.get("id", _NO_ID)
    if request_id is _NO_ID:
        request_id = None
    elif isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
        problem = InvalidRequestError("The request id must be a string, a number or null")
        return None, problem, None
    if raw.get("jsonrpc") != "2.0":
        return request_id, InvalidRequestError('The "jsonrpc" member must be exactly "2.0"'), None
    method = raw.get("method")
    if not isinstance(method, str):
        return request_id, InvalidRequestError('The "method" member must be a string'), None
    operation = BY_JSONRPC_METHOD.get(method)
    if operation is None:
        return request_id, MethodNotFoundError(f"Method not found: {method}"), None
    return request_id, _params_error(operation, raw.get("params")), operation


def _params_error(operation: Operation, params: Any) -> A2AError:
    if operation.params is None:
        return InvalidParamsError(f"{operation.jsonrpc_method} takes no params object")
    if params is None:
        return InvalidParamsError(f"{operation.jsonrpc_method} needs a params object")
    try:
        operation.params.model_validate(params)
    except ValidationError as error:
        return InvalidParamsError.from_validation(operation.jsonrpc_method, error)
    return InvalidRequestError("Request payload validation error")
