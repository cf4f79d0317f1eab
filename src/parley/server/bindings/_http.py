"""ASGI plumbing shared by the HTTP bindings (JSON-RPC, REST): bodies, JSON, SSE, the REST
URL tables and the ``A2A-Version`` asked for.

Raw ASGI rather than a framework request object: the hot path reads the body once,
answers with one pre-encoded byte string, and allocates nothing it does not need.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import TypeVar
from urllib.parse import parse_qsl

import anyio
from starlette.types import Message, Receive, Scope, Send

from parley.protocol._errors import VersionNotSupportedError
from parley.protocol._operations import MAX_REQUEST_SIZE
from parley.protocol._rest import read_json as read_json  # what the bindings parse with
from parley.protocol._versions import requested_version
from parley.server._card import entity_tag, request_base
from parley.server.agent._context import CallContext, Principal
from parley.server.tasks._events import LogReader
from parley.stores import StoredEvent
from parley.types import Event

_T = TypeVar("_T")
_PLACEHOLDER = re.compile(r"\{(id|config_id)\}")
Routes = list[tuple[re.Pattern[str], dict[str, _T]]]


def route_table(rows: Sequence[tuple[str, str, _T]], *, tenant: bool = False) -> Routes[_T]:
    """The REST URL table of ``(path template, HTTP method, operation)`` rows: one regex
    per path (``{id}`` and ``{config_id}`` are path parameters, and with ``tenant`` an
    optional leading ``/{tenant}``), the longest paths first."""
    routes: dict[str, dict[str, _T]] = {}
    for path, method, operation in rows:
        routes.setdefault(path, {})[method] = operation
    ordered = sorted(routes.items(), key=lambda item: -len(item[0]))
    return [(_path_pattern(path, tenant), methods) for path, methods in ordered]


def _path_pattern(path: str, tenant: bool) -> re.Pattern[str]:
    parts = _PLACEHOLDER.split(path)
    regex = "".join(
        f"(?P<{part}>[^/:]+)" if index % 2 else re.escape(part) for index, part in enumerate(parts)
    )
    return re.compile(f"^{'(?:/(?P<tenant>[^/]+))?' if tenant else ''}{regex}$")


JSON_HEADERS = [(b"content-type", b"application/json")]
A2A_JSON_HEADERS = [(b"content-type", b"application/a2a+json")]
"""v1.0's HTTP+JSON answers (v1.0.1 §11.1: ``application/a2a+json``)."""
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
DEFAULT_MAX_BODY_SIZE = MAX_REQUEST_SIZE


_JSON_MEDIA_TYPES = ("application/json", "application/a2a+json")
NOT_JSON = (
    "The request body must be JSON: send it with Content-Type application/json "
    "(or application/a2a+json)"
)


def request_headers(scope: Scope) -> dict[str, str]:
    """The request's headers, decoded once for all that reads them (lower-case names, as
    ASGI gives them; of a repeated header, the last).

    Nearly every request repeats the names and most values of the one before, so each
    is looked up in ``_DECODED`` first: a lookup costs a third of a ``decode`` call."""
    decoded = {}
    known = _DECODED.get
    for name, value in scope["headers"]:
        key = known(name) or _decode(name, name)
        decoded[key] = known(value) or _decode(value, key)
    return decoded


_DECODED: dict[bytes, str] = {}
"""Header names, and the values of ``_KEPT_VALUES``' headers, decoded (latin-1)."""
_KEPT_VALUES = frozenset(
    ("host", "content-type", "content-length", "user-agent", "accept", "accept-encoding",
     "connection", "a2a-version", "x-a2a-extensions")
)  # fmt: skip
"""Headers whose values repeat and say nothing secret (never a credential's: those are
not kept past their request)."""
_DECODED_MAX = 512


def _decode(raw: bytes, name: bytes | str) -> str:
    """``raw`` decoded, and kept in ``_DECODED`` when it is a header's name (``name`` the
    same bytes) or a value of one of ``_KEPT_VALUES`` (``name`` its decoded name)."""
    text = raw.decode("latin-1")
    if (name is raw or name in _KEPT_VALUES) and len(raw) <= 128:
        if len(_DECODED) >= _DECODED_MAX:  # the headers are the client's to choose
            _DECODED.clear()
        _DECODED[raw] = text
    return text


def declares_json(headers: dict[str, str]) -> bool:
    """Whether the request says its body is JSON. Both HTTP bindings refuse other bodies
    with 415: a form a browser may send cross-site (``text/plain``) never starts a task."""
    media_type = headers.get("content-type")
    if media_type is None:
        return False
    if media_type in _JSON_MEDIA_TYPES:  # as nearly every client sends it
        return True
    return media_type.partition(";")[0].strip().lower() in _JSON_MEDIA_TYPES


def refuses_body(headers: dict[str, str], body: bytes) -> bool:
    """Whether an HTTP+JSON request's body must be refused with 415: it declares a type
    that is not JSON, or it has content and declares no type. A body-less call (a cancel
    with nothing to say) needs no type; a cross-site form (``text/plain``, empty or not)
    never reaches an operation."""
    if "content-type" in headers:
        return not declares_json(headers)
    return bool(body.strip())


class BodyTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"The request body is larger than the limit of {limit} bytes")
        self.limit = limit


class ClientGone(Exception):
    """The client disconnected before the body was read."""


async def read_body(receive: Receive, limit: int, headers: dict[str, str]) -> bytes:
    """The request body, refused with ``BodyTooLarge`` as soon as it passes ``limit``."""
    check_length(headers, limit)
    message = await receive()
    body = whole_body(message, limit)
    return body if body is not None else await read_rest(receive, limit, message)


def check_length(headers: dict[str, str], limit: int) -> None:
    """Refuse a body whose declared length passes ``limit`` before reading any of it."""
    length = headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise BodyTooLarge(limit)


def whole_body(message: Message, limit: int) -> bytes | None:
    """The body, when the first message holds all of it (mostly so); else ``None``."""
    if not message.get("more_body", False) and message["type"] == "http.request":
        body: bytes = message.get("body", b"")
        if len(body) > limit:
            raise BodyTooLarge(limit)
        return body
    return None


async def read_rest(receive: Receive, limit: int, message: Message) -> bytes:
    """The body from ``message`` on, over several messages."""
    chunks: list[bytes] = []
    size = 0
    while True:
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge(limit)
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
        message = await receive()
    return b"".join(chunks)


async def send_body(
    send: Send, status: int, body: bytes, headers: Iterable[tuple[bytes, bytes]] = JSON_HEADERS
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_revalidated(
    send: Send,
    headers: Mapping[str, str],
    body: bytes,
    media: Iterable[tuple[bytes, bytes]] = JSON_HEADERS,
) -> None:
    """Answer 200 with ``body`` and its ETag, for caches to keep and revalidate each time
    (``private, no-cache``: the body is the caller's own, e.g. the extended card); 304
    with no body when the request's ``If-None-Match`` names that ETag."""
    etag = entity_tag(body)
    caching = [(b"etag", etag), (b"cache-control", b"private, no-cache")]
    if etag_matches(headers.get("if-none-match"), etag):
        await send({"type": "http.response.start", "status": 304, "headers": caching})
        await send({"type": "http.response.body", "body": b""})
        return
    await send_body(send, 200, body, [*media, *caching])


async def send_sse_error(send: Send, data: bytes) -> None:
    """Answer a streaming call that failed before its first event: HTTP 200 and an SSE
    stream whose one event is ``data`` (spec 3.3.1: a streaming method's body is SSE)."""
    await send_body(send, 200, b"data: %s\n\n" % data, SSE_HEADERS)


def call_context(scope: Scope, headers: dict[str, str]) -> CallContext:
    """The transport facts of an HTTP call: headers, extensions, ``Last-Event-ID``
    (``headers``: ``request_headers(scope)``)."""
    user = scope.get("user")
    return CallContext.from_headers(
        headers,
        None if user is None else getattr(user, "display_name", None),
        request_base(scope, headers),
        user if isinstance(user, Principal) else None,
    )


async def stream_sse(
    receive: Receive,
    send: Send,
    events: AsyncIterator[tuple[int, Event]],
    encode: Callable[[Event], bytes],
    encode_error: Callable[[Exception], bytes],
    error_event: bytes | None = None,
    around: tuple[bytes, bytes] = (b"", b""),
    wire: bool = False,
) -> None:
    """Answer with an SSE stream: one ``id:``/``data:`` event per item of ``events``, its
    data ``encode(event)`` between the two bytes of ``around`` (a JSON-RPC envelope).

    Events ready at the same time go out in one write (a ``LogReader`` says which are).
    With ``wire``, ``encode`` gives an event's wire JSON, and the log's events carry that
    JSON, made once for the store and every stream (``StoredEvent.to_json``): it is used.
    Races the stream against the client going away, so a vanished client stops the
    reader (never the agent). An error raised by ``events`` after the stream started is
    sent as a last event, encoded by ``encode_error`` (with ``event: {error_event}`` when
    given, as v1.0's HTTP+JSON clients expect).
    """
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    client = _Client(receive)
    head, tail = around  # in a format: one per event
    form = b"id: %%d\ndata: %s%%s%s\n\n" % (head.replace(b"%", b"%%"), tail.replace(b"%", b"%%"))
    try:
        last = b""  # sent with the end of the body, in the same write
        try:
            if isinstance(events, LogReader):
                frame = _framer(form, encode, wire)
                last = await _send_batches(send, events, frame, client)
            else:
                client.watch()
                async for sequence, event in events:
                    await _send_chunk(send, form % (sequence, encode(event)))
        except Exception as error:  # the stream has started: the error becomes its last event
            prefix = b"event: %s\n" % error_event if error_event else b""
            last = b"%sdata: %s\n\n" % (prefix, encode_error(error))
        finally:
            client.stop()  # from here on, a client going away cancels nothing
            aclose = None if isinstance(events, LogReader) else getattr(events, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(shield=True):
                    await aclose()
        await send({"type": "http.response.body", "body": last, "more_body": False})
    except asyncio.CancelledError:
        if not client.gone():
            raise


def _framer(
    form: bytes, encode: Callable[[Event], bytes], wire: bool
) -> Callable[[StoredEvent], bytes]:
    """The SSE event of a logged event (``form``: its sequence and data's JSON go in)."""
    if wire:
        return lambda stored: form % (stored.sequence, stored.to_json())
    return lambda stored: form % (stored.sequence, encode(stored.event))


async def _send_batches(
    send: Send, events: LogReader, frame: Callable[[StoredEvent], bytes], client: _Client
) -> bytes:
    """Send what is ready, wait for more, until the reading ends: one write and one
    wake-up for every event appended meanwhile, however many. Returns the last batch,
    unsent, for the write that ends the body."""
    while True:
        chunks: list[bytes] = []
        try:
            for stored in events.take():
                chunks.append(frame(stored))
        except Exception:
            if chunks:  # the events before the one that failed, then the error
                await _send_chunk(send, b"".join(chunks))
            raise
        if events.done:
            return b"".join(chunks)
        if chunks:
            await _send_chunk(send, b"".join(chunks))
        waiter = events.waiter()
        if waiter is not None:
            client.watch(waiter)
            await waiter


async def _send_chunk(send: Send, chunk: bytes) -> None:
    await send({"type": "http.response.body", "body": chunk, "more_body": True})


class _Client:
    """Watches for the client of a stream going away, and then cancels the task serving
    the stream. One plain task that waits on ``receive``, started only once the stream
    has to wait: an anyio task group and cancel scope per stream cost more than the
    whole of a short stream's framing."""

    __slots__ = ("_ended", "_host", "_looking", "_receive", "_watcher")

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._host = asyncio.current_task()
        self._watcher: asyncio.Task[bool] | None = None
        self._ended = False
        self._looking = False

    def watch(self, waiter: asyncio.Future[None] | None = None) -> None:
        """Watch from now on; with ``waiter``, what the stream waits on, from the loop's
        next turn on if the stream still waits then. The run a stream follows was
        scheduled before it, so an agent that makes its events without waiting has made
        them all by then, and such a stream never starts the watcher at all."""
        if self._watcher is not None or self._ended:
            return
        if waiter is None:
            self._watcher = asyncio.ensure_future(self._watch())
        elif not self._looking:
            self._looking = True
            asyncio.get_running_loop().call_soon(self._look, waiter)

    def _look(self, waiter: asyncio.Future[None]) -> None:
        self._looking = False
        if not waiter.done():
            self.watch()

    def gone(self) -> bool:
        """Whether the task was cancelled because the client went away, and for nothing
        else: that cancellation is then taken back, as the stream simply ends."""
        watcher = self._watcher
        if watcher is None or not watcher.done() or watcher.cancelled() or not watcher.result():
            return False
        assert self._host is not None
        return self._host.uncancel() == 0

    def stop(self) -> None:
        """The stream is over: a disconnect from now on cancels nothing."""
        self._ended = True
        watcher = self._watcher
        if watcher is not None and not watcher.done():
            watcher.cancel()
            # Let go of it: its cancellation's traceback holds this object (a cycle
            # only the garbage collector would free).
            self._watcher = None

    async def _watch(self) -> bool:
        try:
            while (await self._receive())["type"] != "http.disconnect":
                pass
        except Exception:  # the server cannot tell: the stream ends when its events do
            return False
        if self._ended or self._host is None:
            return False
        self._host.cancel()
        return True


def version_asked(scope: Scope) -> str | None:
    """``A2A-Version`` from the headers, else from the query (v1.0.1 §3.6.1)."""
    for name, value in scope["headers"]:
        if name == b"a2a-version":
            return str(value.decode("latin-1"))
    query = scope.get("query_string", b"")
    if b"a2a-version" in query.lower():
        for name, value in parse_qsl(query.decode("latin-1")):
            if name.lower() == "a2a-version":
                return str(value)
    return None


def supported_version_asked(scope: Scope) -> str | None:
    """The version ``A2A-Version`` names when parley speaks it; ``None`` when the request
    names none, or one parley does not speak (for what is served to any version alike,
    as the card: its shape follows the version, but no version is refused it)."""
    try:
        return requested_version(version_asked(scope))
    except VersionNotSupportedError:
        return None


def etag_matches(if_none_match: str | None, etag: bytes) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (RFC 9110 §13.1.2: weak comparison; ``*``
    matches any)."""
    if not if_none_match:
        return False
    tag = etag.decode()
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == tag:
            return True
    return False
