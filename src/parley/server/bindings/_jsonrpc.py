"""The JSON-RPC 2.0 binding (spec 3.2.1, 7, 8): POST at the card's URL.

Several dialects share the endpoint (``parley.protocol.DIALECTS``: v0.3, the 2025-early
dialect, ...). A request is parsed once into JSON and served through its dialect's
method table (``_answer``): decode the params into the core params, check, call the
handler, encode in the dialect's shapes; an invalid one gets the JSON-RPC error it
deserves, with the ``id`` to echo. The handler never knows which dialect a request came
in.

``parley._speedups.jsonrpc`` may first read the request from its bytes straight into
its params (one validation, no JSON detour): a v0.3 request with no ``A2A-Version`` (or
``0.3``), and a v1.0 ``SendMessage`` or ``SendStreamingMessage`` in its plain form.
Such a request is served by ``_serve``, the same answer by a shorter way; whatever the
seam declines is served by ``_answer``.

A streaming method (``message/stream``, ``tasks/resubscribe``) always answers with an SSE
stream (spec 3.3.1, 7): an error met before the first event, from invalid params to an
unknown task, is that stream's one event. Only a request whose method is not known
(parse error, invalid request, method not found) or whose body was never read (405, 413)
gets a plain ``application/json`` error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from pydantic_core import to_json
from starlette.types import Receive, Scope, Send

from parley._speedups.jsonrpc import read_request
from parley.protocol import (
    V0_3,
    A2AError,
    Dialect,
    DialectMethod,
    InvalidRequestError,
    MethodNotFoundError,
    Operation,
    PermissionDeniedError,
    TaskNotFoundError,
    UnauthenticatedError,
    dialect_for_version,
    recognise,
)
from parley.protocol._dialect import encode_result
from parley.protocol._dialects import DIALECTS_BY_NAME
from parley.protocol._errors import shorten
from parley.protocol._versions import V1_0
from parley.server.agent._context import CallContext
from parley.server.bindings._errors import as_a2a_error
from parley.server.bindings._http import (
    DEFAULT_MAX_BODY_SIZE,
    JSON_HEADERS,
    NOT_JSON,
    BodyTooLarge,
    ClientGone,
    call_context,
    check_length,
    declares_json,
    read_json,
    read_rest,
    request_headers,
    send_body,
    send_sse_error,
    stream_sse,
    version_asked,
    whole_body,
)
from parley.server.tasks._handler import RequestHandler
from parley.types import A2AModel, AgentCard, Task, TaskQueryParams

_NO_ID = object()

CardSource = Callable[[CallContext], AgentCard]
"""The public card as the caller should see it (2025-early's ``agent/getCard``)."""


def success(request_id: Any, result: Any) -> bytes:
    """A JSON-RPC success response, as bytes (``result`` is always present)."""
    return envelope(request_id, b"result", encode_result(result))


def failure(request_id: Any, error: A2AError, dialect: Dialect = V0_3) -> bytes:
    """A JSON-RPC error response in ``dialect``'s codes, as bytes."""
    return envelope(request_id, b"error", dialect.encode_error(error))


def envelope(request_id: Any, member: bytes, value: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":%s,"%s":%s}' % (_id_json(request_id), member, value)


def _id_json(request_id: Any) -> bytes:
    # Most ids are numbers (never a bool: a request's id is read strictly)
    if type(request_id) is int:
        return b"%d" % request_id
    data: bytes = to_json(request_id)
    return data


def result_envelope(request_id: Any) -> tuple[bytes, bytes]:
    """The bytes before and after a result's JSON in the JSON-RPC success response of
    ``request_id``: what each event of a stream is sent in (``stream_sse``'s ``around``)."""
    return b'{"jsonrpc":"2.0","id":%s,"result":' % _id_json(request_id), b"}"


class JSONRPCBinding:
    """The ASGI app of the JSON-RPC endpoint.

    ``card``: the public card for a call (``agent/getCard``); without it, the handler's.
    """

    def __init__(
        self,
        handler: RequestHandler,
        *,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        card: CardSource | None = None,
    ) -> None:
        self.handler = handler
        self.max_body_size = max_body_size
        self.card = card or (lambda call: handler.card)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await send_body(
                send,
                405,
                failure(None, InvalidRequestError("JSON-RPC requests must use POST")),
                [(b"content-type", b"application/json"), (b"allow", b"POST")],
            )
            return
        headers = request_headers(scope)
        if not declares_json(headers):
            await send_body(send, 415, failure(None, InvalidRequestError(NOT_JSON)))
            return
        try:
            # read_body's steps, without a coroutine of its own for every request
            limit = self.max_body_size
            check_length(headers, limit)
            message = await receive()
            body = whole_body(message, limit)
            if body is None:
                body = await read_rest(receive, limit, message)
        except BodyTooLarge as too_large:
            await send_body(send, 413, failure(None, InvalidRequestError(str(too_large))))
            return
        except ClientGone:
            return
        call = call_context(scope, headers)
        version = headers.get("a2a-version")
        if not version and scope.get("query_string"):
            version = _query_version(scope)
        fast = _FAST.get(version)
        read = None if fast is None else read_request(body, version)
        if fast is None or read is None:
            await self._answer(body, call, receive, send, version)
            return
        await self._serve(fast, *read, call, receive, send)

    async def _serve(
        self,
        fast: FastPath,
        request_id: Any,
        operation: Operation,
        params: Any,
        call: CallContext,
        receive: Receive,
        send: Send,
    ) -> None:
        """The fast path: a valid request of a dialect's hot methods, decoded straight
        from bytes."""
        dialect = fast.dialect
        call.protocol_version = dialect.protocol_version
        try:
            result = await getattr(self.handler, operation.name)(params, call)
        except Exception as error:
            problem = as_a2a_error(error)
            await _fail(send, operation, failure(request_id, problem, dialect), _status(problem))
            return
        if operation.streaming:

            def encode_error(problem: Exception) -> bytes:
                return failure(request_id, as_a2a_error(problem), dialect)

            # v0.3's event JSON is the wire JSON the log's entries carry, made once
            await stream_sse(
                receive,
                send,
                result,
                fast.encode_event,
                encode_error,
                around=result_envelope(request_id),
                wire=fast.logged_json,
            )
        else:
            await send_body(send, 200, envelope(request_id, b"result", fast.encode(result)))

    async def _answer(
        self,
        body: bytes,
        call: CallContext,
        receive: Receive,
        send: Send,
        version: str | None = None,
    ) -> None:
        """Serve a request through its dialect's method table (see the module docs)."""
        dialect = V0_3
        try:
            request_id, method, params = parse(body)
            try:
                dialect = recognise(method, params, version)
            except A2AError as error:
                raise _Refused(request_id, error) from None
            entry = dialect.methods.get(method)
            if entry is None:
                missing = MethodNotFoundError(f"Method not found: {shorten(method)}")
                raise _Refused(request_id, missing)
        except _Refused as refused:
            await _fail(send, None, failure(refused.request_id, refused.error, dialect))
            return
        try:
            call.protocol_version = dialect.protocol_version
            if dialect.tenant_of is not None:
                call.tenant = dialect.tenant_of(params)
            decoded = entry.decode(params)
            checked = None if entry.check is None else await entry.check(params, self._lookup)
            result = await self._call(entry.operation, decoded, call)
        except Exception as error:
            refusal = as_a2a_error(error)
            problem = failure(request_id, refusal, dialect)
            await _fail(send, entry.operation, problem, _status(refusal))
            return
        if entry.operation.streaming:
            await self._stream(
                receive, send, dialect, entry, request_id, result, (decoded, checked)
            )
        else:
            await send_body(
                send, 200, envelope(request_id, b"result", entry.encode(result, decoded))
            )

    async def _call(self, operation: Operation, params: Any, call: CallContext) -> Any:
        if operation.name == "get_card":
            return self.card(call)
        return await getattr(self.handler, operation.name)(params, call)

    async def _lookup(self, task_id: str) -> Task | None:
        try:
            return await self.handler.get_task(TaskQueryParams(id=task_id, history_length=0))
        except TaskNotFoundError:
            return None

    @staticmethod
    async def _stream(
        receive: Receive,
        send: Send,
        dialect: Dialect,
        entry: DialectMethod,
        request_id: Any,
        events: Any,
        state: tuple[Any, Any],
    ) -> None:
        params, checked = state
        if entry.stream_encoder is not None:
            encode_event = entry.stream_encoder(params, checked)
        else:

            def encode_event(event: Any) -> bytes:
                return entry.encode(event, params)

        def encode_error(problem: Exception) -> bytes:
            return failure(request_id, as_a2a_error(problem), dialect)

        around = result_envelope(request_id)
        await stream_sse(receive, send, events, encode_event, encode_error, around=around)


def refusal(error: A2AError, scope: Scope) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """A refusal before the body is read (authentication), in the JSON-RPC error codes of
    the version the request asks for, and its headers."""
    version = version_asked(scope)
    try:
        dialect = dialect_for_version(version) if version else V0_3
    except A2AError:
        dialect = V0_3
    return failure(None, error, dialect), JSON_HEADERS


def _query_version(scope: Scope) -> str | None:
    query: bytes = scope.get("query_string", b"")
    if not query or b"A2A-Version" not in query:
        return None
    values = parse_qs(query.decode("latin-1")).get("A2A-Version")
    return values[0] if values else None


async def _fail(
    send: Send, operation: Operation | None, error_response: bytes, status: int = 200
) -> None:
    """Answer with a JSON-RPC error: one SSE event for a streaming method, else JSON."""
    if operation is not None and operation.streaming and status == 200:
        await send_sse_error(send, error_response)
    else:
        await send_body(send, status, error_response)


def _status(error: A2AError) -> int:
    """JSON-RPC errors travel in HTTP 200, but refused credentials are refused at the
    HTTP level too (spec 4.4, 7.10): 401 or 403, as from the authentication layer."""
    if isinstance(error, UnauthenticatedError | PermissionDeniedError):
        return error.http_status
    return 200


class _Refused(Exception):
    """A request answered with ``error`` before it reaches its dialect's method."""

    def __init__(self, request_id: Any, error: A2AError) -> None:
        self.request_id = request_id
        self.error = error


def parse(body: bytes) -> tuple[Any, str, Any]:
    """The ``id``, ``method`` and ``params`` of a request body, its envelope checked (spec
    8.1). Raises ``_Refused`` with the error and the id to answer with."""
    try:
        raw = read_json(body)
    except A2AError as error:
        raise _Refused(None, error) from None
    if not isinstance(raw, dict):
        raise _Refused(None, InvalidRequestError("A JSON-RPC request must be a JSON object"))
    request_id = raw.get("id", _NO_ID)
    if request_id is _NO_ID:
        request_id = None
    elif isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
        problem = InvalidRequestError("The request id must be a string, a number or null")
        raise _Refused(None, problem)
    if raw.get("jsonrpc") != "2.0":
        problem = InvalidRequestError('The "jsonrpc" member must be exactly "2.0"')
        raise _Refused(request_id, problem)
    method = raw.get("method")
    if not isinstance(method, str):
        raise _Refused(request_id, InvalidRequestError('The "method" member must be a string'))
    return request_id, method, raw.get("params")


@dataclass(frozen=True, slots=True)
class FastPath:
    """How a dialect answers a request ``parley._speedups.jsonrpc`` read from bytes."""

    dialect: Dialect
    encode: Callable[[Any], bytes]
    """A result -> the JSON of the ``result`` member."""
    encode_event: Callable[[Any], bytes]
    """A stream event -> the JSON of its ``result`` member."""
    logged_json: bool = False
    """Whether ``encode_event`` gives the wire JSON the event log's entries carry (made
    once per event, and written as it is)."""


def _v1_fast() -> dict[str | None, FastPath]:
    """v1.0's ``SendMessage`` and ``SendStreamingMessage``, when v1.0 is served."""
    dialect = DIALECTS_BY_NAME.get(V1_0)
    if dialect is None:  # pragma: no cover - the tests have parley[grpc]
        return {}
    from parley.protocol.v1._protojson import event_json

    return {V1_0: FastPath(dialect, event_json, event_json)}


_V0_3_FAST = FastPath(V0_3, encode_result, A2AModel.to_json, logged_json=True)
_FAST: dict[str | None, FastPath] = {
    None: _V0_3_FAST,
    "": _V0_3_FAST,
    "0.3": _V0_3_FAST,
    **_v1_fast(),
}
"""How a request read from bytes is answered, by its ``A2A-Version`` (none: v0.3); other
values are always read the plain way."""
