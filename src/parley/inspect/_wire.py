"""The raw wire log: every request the inspector's client sends, every answer and every
stream event, exactly as they went over the wire, in order.

HTTP bindings (JSON-RPC, HTTP+JSON, the card and key fetches) are recorded by an httpx
transport wrapped around the real one: the request's bytes as sent, the answer's status
and headers as soon as they arrive, then its body, or for an event stream each event as
it arrives. gRPC has no HTTP body to show, so a client interceptor records each call's
params, answers and events as the client gave and got them.
"""

from __future__ import annotations

import json
import shlex
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
from anyio.streams.memory import MemoryObjectSendStream

from parley.client import ClientCall, ClientInterceptor
from parley.protocol import A2AError

_STREAMED = "text/event-stream"
_FEED_BUFFER = 1024
"""Entries a slow page may lag behind before it misses some (it can reload the log)."""
_OPEN_CALLS = 256
"""gRPC calls whose answers are still told apart (each stream stays here once done)."""
KEPT = 10_000
"""Entries kept for a page that opens (or reopens) the feed; older ones are dropped."""


class WireLog:
    """The entries of one connection, and the pages following them live."""

    def __init__(self) -> None:
        self.entries: deque[dict[str, Any]] = deque(maxlen=KEPT)
        self._count = 0
        self._followers: set[MemoryObjectSendStream[dict[str, Any]]] = set()

    def add(self, kind: str, **fields: Any) -> int:
        """Record an entry; returns its number (``of`` in the entries that follow it)."""
        self._count += 1
        entry = {"n": self._count, "kind": kind, "time": time.time(), **fields}
        self.entries.append(entry)
        for follower in list(self._followers):
            try:
                follower.send_nowait(entry)
            except anyio.WouldBlock:
                pass
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._followers.discard(follower)
        return self._count

    async def follow(self) -> AsyncIterator[dict[str, Any]]:
        """The entries so far, then each new one as it is added."""
        sender, receiver = anyio.create_memory_object_stream[dict[str, Any]](_FEED_BUFFER)
        backlog = list(self.entries)
        self._followers.add(sender)
        try:
            for entry in backlog:
                yield entry
            async with receiver:
                async for entry in receiver:
                    yield entry
        finally:
            self._followers.discard(sender)
            sender.close()


def curl(request: httpx.Request, body: bytes) -> str:
    """The request as a ``curl`` command line that sends the same bytes."""
    words = ["curl"]
    if request.method != ("POST" if body else "GET"):
        words += ["-X", request.method]
    if request.headers.get("accept") == _STREAMED:
        words.append("-N")  # show events as they arrive
    for name, value in request.headers.multi_items():
        if name.lower() not in {"host", "content-length", "accept-encoding", "connection"}:
            words += ["-H", f"{name}: {value}"]
    if body:
        words += ["--data-binary", body.decode("utf-8", "replace")]
    words.append(str(request.url))
    return " ".join(shlex.quote(word) for word in words)


class RecordingTransport(httpx.AsyncBaseTransport):
    """An httpx transport that records what ``inner`` sends and receives in ``log``."""

    def __init__(self, log: WireLog, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.log = log
        self.inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        number = self.log.add(
            "request",
            binding="http",
            method=request.method,
            url=str(request.url),
            headers=dict(request.headers.multi_items()),
            body=_text(body),
            curl=curl(request, body),
        )
        try:
            response = await self.inner.handle_async_request(request)
        except httpx.HTTPError as error:
            self.log.add("failure", of=number, error=f"{type(error).__name__}: {error}")
            raise
        self.log.add(
            "response",
            of=number,
            status=response.status_code,
            headers=dict(response.headers.multi_items()),
        )
        streamed = response.headers.get("content-type", "").startswith(_STREAMED)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _RecordedBody(response.stream, self.log, number, streamed)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _RecordedBody(httpx.AsyncByteStream):
    """An answer's body passed on unchanged while it is recorded: whole once read, or
    one entry per server-sent event as each arrives."""

    def __init__(self, inner: httpx.AsyncByteStream, log: WireLog, of: int, streamed: bool) -> None:
        self.inner = inner
        self.log = log
        self.of = of
        self.streamed = streamed
        self.buffer = b""
        self.done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.buffer += chunk
            if self.streamed:
                self._events()
            yield chunk
        self._finish()

    def _events(self) -> None:
        normalized = self.buffer.replace(b"\r\n", b"\n")
        *events, self.buffer = normalized.split(b"\n\n")
        for event in events:
            if event.strip():
                self.log.add("event", of=self.of, body=_text(event))

    def _finish(self) -> None:
        if self.done:
            return
        self.done = True
        if self.streamed:
            if self.buffer.strip():
                self.log.add("event", of=self.of, body=_text(self.buffer))
            self.log.add("end", of=self.of)
        else:
            self.log.add("body", of=self.of, body=_text(self.buffer))

    async def aclose(self) -> None:
        if not self.done:
            self.done = True
            self.log.add("end", of=self.of, note="closed by the client")
        await self.inner.aclose()


class GRPCRecorder(ClientInterceptor):
    """Records gRPC calls as the client makes them: the method and its params, then each
    answer or event, or the error."""

    def __init__(self, log: WireLog, target: str) -> None:
        self.log = log
        self.target = target
        self._calls: dict[int, int] = {}

    async def before(self, call: ClientCall) -> None:
        if len(self._calls) >= _OPEN_CALLS:  # streams have no end hook: forget the oldest
            del self._calls[next(iter(self._calls))]
        self._calls[id(call)] = self.log.add(
            "request",
            binding="grpc",
            method=call.operation.grpc_method or call.operation.name,
            url=self.target,
            headers=dict(call.context.headers),
            body=_model(call.params),
        )

    async def after(self, call: ClientCall, result: Any) -> None:
        of = self._calls.get(id(call))
        kind = "event" if call.operation.streaming else "body"
        self.log.add(kind, of=of, body=_model(result))
        if not call.operation.streaming:
            self._calls.pop(id(call), None)

    async def failed(self, call: ClientCall, error: A2AError) -> None:
        of = self._calls.pop(id(call), None)
        self.log.add("failure", of=of, error=f"{type(error).__name__}: {error.message}")


def _model(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return json.dumps([json.loads(item.to_json()) for item in value], indent=2)
    return json.dumps(json.loads(value.to_json()), indent=2)


def _text(body: bytes) -> str:
    return body.decode("utf-8", "replace")
