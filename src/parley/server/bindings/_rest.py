"""The HTTP+JSON (REST) binding (spec 3.2.3, 3.5.6; v1.0.1 §11), driven by REST dialects.

A request's version is its ``A2A-Version`` header or query parameter (v1.0.1 §3.6);
without one, its path decides (``parley.protocol._rest_dialects``). The version's
dialect (``RESTDialect``) gives everything that differs between versions: the routes,
how a request becomes the core params and a result the body, the error body, its HTTP
status and the media type. This module reads the body, calls the request handler and
sends what the dialect wrote; it never asks which version it serves. A version parley
does not speak is refused with ``VersionNotSupportedError`` (400).

Streams are SSE with one ``data:`` line per event and the event's sequence number as
``id:``; an error after a stream started is its last event.
"""

from __future__ import annotations

from typing import Any

from starlette.types import Receive, Scope, Send

from parley.protocol import (
    A2AError,
    InvalidRequestError,
    MethodNotFoundError,
    VersionNotSupportedError,
)
from parley.protocol._errors import shorten
from parley.protocol._rest import RESTDialect, RESTRoute
from parley.protocol._rest_dialects import NEWEST_REST, REST_DIALECTS, path_dialect, rest_dialect
from parley.server.bindings._errors import as_a2a_error
from parley.server.bindings._http import (
    DEFAULT_MAX_BODY_SIZE,
    NOT_JSON,
    BodyTooLarge,
    ClientGone,
    Routes,
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
from parley.server.tasks._handler import RequestHandler

_ROUTES: dict[str, Routes[RESTRoute]] = {
    dialect.version: route_table(
        [(route.path, route.method, route) for route in dialect.routes],
        tenant=dialect.tenant_paths,
    )
    for dialect in REST_DIALECTS
}


def route(dialect: RESTDialect, path: str) -> tuple[dict[str, RESTRoute], dict[str, str]] | None:
    """The routes of ``dialect`` at ``path`` by method, and its path parameters."""
    for pattern, methods in _ROUTES[dialect.version]:
        match = pattern.match(path)
        if match is not None:
            return methods, {k: v for k, v in match.groupdict().items() if v is not None}
    return None


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

    def handles(self, path: str) -> bool:
        if not path.startswith(self.prefix):
            return False
        rest = path[len(self.prefix) :]
        dialect = path_dialect(rest)
        return bool(dialect.prefix) or route(dialect, rest) is not None

    def refusal(self, error: A2AError, scope: Scope) -> tuple[bytes, list[tuple[bytes, bytes]]]:
        """A refusal before the request is read (authentication), in the error body and
        media type of the version the request is for."""
        path = scope["path"][len(self.prefix) :]
        try:
            dialect = rest_dialect(version_asked(scope), path)
        except VersionNotSupportedError:
            dialect = path_dialect(path)
        return dialect.encode_error(error), _media(dialect)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"][len(self.prefix) :]
        try:
            dialect = rest_dialect(version_asked(scope), path)
        except VersionNotSupportedError as error:
            await _fail(send, NEWEST_REST, error)
            return
        found = route(dialect, path)
        if found is None:
            where = shorten(f"{scope['method']} {path}")
            problem = MethodNotFoundError(f"No {dialect.label} operation at {where}")
            await _fail(send, dialect, problem, 404)
            return
        methods, path_params = found
        chosen = methods.get(scope["method"])
        if chosen is None:
            allow = ", ".join(sorted(methods))
            refused = InvalidRequestError(f"{shorten(path)} takes {allow}")
            await _fail(send, dialect, refused, 405, (b"allow", allow.encode()))
            return
        await self._serve(dialect, chosen, path_params, scope, receive, send)

    async def _serve(
        self,
        dialect: RESTDialect,
        chosen: RESTRoute,
        path_params: dict[str, str],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        headers = request_headers(scope)
        try:
            body = await read_body(receive, self.max_body_size, headers)
        except BodyTooLarge as too_large:
            await _fail(send, dialect, InvalidRequestError(str(too_large)), 413)
            return
        except ClientGone:
            return
        if scope["method"] == "POST" and refuses_body(headers, body):
            await _fail(send, dialect, InvalidRequestError(NOT_JSON), 415)
            return
        call = call_context(scope, headers)
        call.protocol_version = dialect.version
        operation = chosen.operation
        try:
            query = scope.get("query_string", b"").decode("latin-1")
            params, call.tenant = chosen.decode(path_params, query, body)
            result = await getattr(self.handler, operation.name)(params, call)
        except Exception as error:
            await _fail(send, dialect, as_a2a_error(error))
            return
        if operation.streaming:
            await _stream(dialect, chosen, result, receive, send)
        elif operation.name == "get_extended_card":
            await send_revalidated(send, headers, chosen.encode(result), _media(dialect))
        else:
            await send_body(send, 200, chosen.encode(result), _media(dialect))


async def _stream(
    dialect: RESTDialect, chosen: RESTRoute, events: Any, receive: Receive, send: Send
) -> None:
    def encode_error(problem: Exception) -> bytes:
        return dialect.encode_error(as_a2a_error(problem))

    await stream_sse(receive, send, events, chosen.encode, encode_error, dialect.error_event)


def _media(dialect: RESTDialect) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", dialect.media_type)]


async def _fail(
    send: Send,
    dialect: RESTDialect,
    error: A2AError,
    status: int | None = None,
    *extra: tuple[bytes, bytes],
) -> None:
    body = dialect.encode_error(error)
    await send_body(send, status or dialect.status(error), body, [*_media(dialect), *extra])
