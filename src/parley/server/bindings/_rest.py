"""The HTTP+JSON (REST) binding (spec 3.2.3, 3.5.6): the URL table of the operation table.

This module serves v0.3's paths (``/v1/...``) and hands v1.0's (``/message:send``,
``/tasks/{id}``, ...) to ``_v1``. The version is the ``A2A-Version`` header or query
parameter (v1.0.1 §3.6); without one, the path decides (v0.3's all start with ``/v1/``).
A version parley does not speak is refused with ``VersionNotSupportedError`` (400).

Each request becomes the proto request message of its operation (path parameters into
``name``/``parent``, the body parsed as proto-JSON), then the params model through the
shared converters of ``parley.protocol.protobuf``; results go back out as proto-JSON.
That is the wire the official SDKs' REST clients and servers speak. Streams are SSE with
one ``data:`` line per event and the event's sequence number as ``id:``.

Errors answer with the error class's HTTP status and one body for every error::

    {"code": -32001, "message": "Task t1 was not found", "data": ...}

``message`` is what the official SDK's REST server sends; ``code`` lets a client rebuild
the exact A2A error class.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from starlette.types import Receive, Scope, Send

from parley.protocol import (
    LIST_TASKS,
    OPERATIONS,
    A2AError,
    ConversionError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    MethodNotFoundError,
    Operation,
    VersionNotSupportedError,
    requested_version,
)
from parley.protocol._errors import shorten
from parley.protocol._versions import V1_0
from parley.protocol.protobuf import PROTO_OPERATIONS, from_json, pb
from parley.protocol.protobuf import to_json as proto_json
from parley.protocol.protobuf._core import config_name, task_name, task_to_proto
from parley.protocol.v1 import BY_V1_NAME, decode_request, rest_error_body
from parley.server.bindings._errors import as_a2a_error
from parley.server.bindings._http import (
    A2A_JSON_HEADERS,
    DEFAULT_MAX_BODY_SIZE,
    JSON_HEADERS,
    NOT_JSON,
    BodyTooLarge,
    ClientGone,
    call_context,
    read_body,
    refuses_body,
    request_headers,
    route_table,
    send_body,
    send_revalidated,
    stream_sse,
    version_asked,
)
from parley.server.bindings._v1 import RESTv1
from parley.server.bindings._v1 import fail as v1_fail
from parley.server.bindings._v1 import route as v1_route
from parley.server.tasks._handler import RequestHandler
from parley.types import Event

_BOOLEANS: dict[str, Any] = {"true": True, "false": False}

ROUTES = route_table(
    [(op.rest_path, op.rest_method, op) for op in (*OPERATIONS, LIST_TASKS)]
    # the official SDK subscribes with GET
    + [(op.rest_path, "GET", op) for op in OPERATIONS if op.name == "resubscribe"]
)


class RESTBinding:
    """The ASGI app of the HTTP+JSON binding, serving the paths under ``prefix``."""

    def __init__(
        self,
        handler: RequestHandler,
        *,
        prefix: str = "",
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    ) -> None:
        self.handler = handler
        self.prefix = prefix.rstrip("/")
        self.max_body_size = max_body_size
        self.v1 = RESTv1(handler, max_body_size)

    def handles(self, path: str) -> bool:
        if not path.startswith(self.prefix):
            return False
        rest = path[len(self.prefix) :]
        return rest.startswith("/v1/") or v1_route(rest) is not None

    def refusal(self, error: A2AError, scope: Scope) -> tuple[bytes, list[tuple[bytes, bytes]]]:
        """A refusal before the request is read (authentication), in the error body and
        media type of the version the request is for."""
        path = scope["path"][len(self.prefix) :]
        try:
            version = requested_version(version_asked(scope))
        except VersionNotSupportedError:
            version = None
        if version == V1_0 or (version is None and not path.startswith("/v1/")):
            return rest_error_body(error), A2A_JSON_HEADERS
        return error.body(), JSON_HEADERS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"][len(self.prefix) :]
        try:
            version = requested_version(version_asked(scope))
        except VersionNotSupportedError as error:
            await v1_fail(send, error)
            return
        if version == V1_0 or (version is None and not path.startswith("/v1/")):
            await self.v1(scope, receive, send, path)
            return
        for pattern, methods in ROUTES:
            match = pattern.match(path)
            if match is None:
                continue
            operation = methods.get(scope["method"])
            if operation is None:
                allow = ", ".join(sorted(methods)).encode()
                problem = InvalidRequestError(f"{shorten(path)} takes {allow.decode()}")
                await send_body(send, 405, problem.body(), _headers((b"allow", allow)))
                return
            await self._serve(operation, match.groupdict(), scope, receive, send)
            return
        where = shorten(f"{scope['method']} {path}")
        await _fail(send, MethodNotFoundError(f"No A2A operation at {where}"), 404)

    async def _serve(
        self,
        operation: Operation,
        path_params: dict[str, str],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        headers = request_headers(scope)
        try:
            body = await read_body(receive, self.max_body_size, headers)
        except BodyTooLarge as too_large:
            await _fail(send, InvalidRequestError(str(too_large)), 413)
            return
        except ClientGone:
            return
        if scope["method"] == "POST" and refuses_body(headers, body):
            await _fail(send, InvalidRequestError(NOT_JSON), 415)
            return
        try:
            params = decode_params(operation, path_params, scope, body)
            result = await getattr(self.handler, operation.name)(
                params, call_context(scope, headers)
            )
        except Exception as error:
            await _fail(send, as_a2a_error(error))
            return
        if operation.streaming:
            to_proto = PROTO_OPERATIONS[operation.name].result_to_proto

            def encode(event: Event) -> bytes:
                return proto_json(to_proto(event))

            def encode_error(problem: Exception) -> bytes:
                return as_a2a_error(problem).body()

            await stream_sse(receive, send, result, encode, encode_error)
        elif operation.name == "get_extended_card":
            await send_revalidated(send, headers, encode_result(operation, result))
        else:
            await send_body(send, 200, encode_result(operation, result))


def decode_params(operation: Operation, path: dict[str, str], scope: Scope, body: bytes) -> Any:
    """The params model of ``operation`` from the path, the query and the body."""
    if operation is LIST_TASKS:
        # v0.3's table has GET /v1/tasks but its proto no message: the query is read as
        # v1.0's ListTasksRequest (the same camelCase names)
        query = {k: _BOOLEANS.get(v, v) for k, v in _query(scope).items() if k != "A2A-Version"}
        return decode_request(BY_V1_NAME[LIST_TASKS.name], query)
    proto_op = PROTO_OPERATIONS[operation.name]
    if operation.name == "get_extended_card":
        return None
    takes_body = operation.rest_method == "POST" and body.strip()
    request = _parse_body(body, proto_op.request) if takes_body else proto_op.request()
    task_id = path.get("id")
    if task_id is not None:
        fields = request.DESCRIPTOR.fields_by_name
        if "name" in fields:
            request.name = (
                config_name(task_id, path.get("config_id"))
                if path.get("config_id")
                else task_name(task_id)
            )
        if "parent" in fields:
            request.parent = task_name(task_id)
    if operation.name == "set_push_config" and not request.HasField("config"):
        # a bare TaskPushNotificationConfig body, as some clients send
        request.config.CopyFrom(from_json(body, pb.TaskPushNotificationConfig))
    params = proto_op.params_from_proto(request)
    history_length = _query(scope).get("historyLength")
    if history_length is not None and hasattr(params, "history_length"):
        params.history_length = _integer("historyLength", history_length)
    return params


def _parse_body(body: bytes, message_class: Any) -> Any:
    """The body as ``message_class``; a body that is not JSON at all is a parse error
    (-32700, as over JSON-RPC: spec 3.4.1, 8.1), one that does not fit is invalid params."""
    try:
        return from_json(body, message_class)
    except ConversionError:
        try:
            json.loads(body)
        except ValueError as error:
            raise JSONParseError.from_decode(error) from None
        except RecursionError:
            raise InvalidParamsError.too_deep() from None
        raise


def encode_result(operation: Operation, result: Any) -> bytes:
    if operation is LIST_TASKS:  # v0.3.0 §7.3.x REST: ``[Task]``, one page
        return b"[%s]" % b",".join(proto_json(task_to_proto(task)) for task in result.tasks)
    if operation.name == "get_extended_card":
        # the official SDK serves the card in its JSON-schema form here, not proto-JSON
        data: bytes = result.to_json()
        return data
    return proto_json(PROTO_OPERATIONS[operation.name].result_to_proto(result))


def _query(scope: Scope) -> dict[str, str]:
    raw = scope.get("query_string", b"").decode("latin-1")
    return {key: values[-1] for key, values in parse_qs(raw).items()}


def _integer(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InvalidParamsError(f"{name} must be a whole number") from None


def _headers(*extra: tuple[bytes, bytes]) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), *extra]


async def _fail(send: Send, error: A2AError, status: int | None = None) -> None:
    await send_body(send, status or error.http_status, error.body())
