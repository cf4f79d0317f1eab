"""The raw wire log: every request the inspector's client sends, every answer and every
stream event, exactly as they went over the wire, in order.

HTTP bindings (JSON-RPC, HTTP+JSON, the card and key fetches) are recorded by an httpx
transport wrapped around the real one: the request's bytes as sent, the answer's status
and headers as soon as they arrive, then its body, or for an event stream each event as
it arrives. gRPC calls are recorded by the channel's interceptors (``_grpc_wire``).
"""

from __future__ import annotations

import shlex
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
from anyio.streams.memory import MemoryObjectSendStream

_STREAMED = "text/event-stream"
_FEED_BUFFER = 1024
"""Entries a slow page may lag behind before it misses some (it can reload the log)."""
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

    def close(self) -> None:
        """End every follower's feed (the inspector is stopping)."""
        for follower in self._followers:
            follower.close()
        self._followers.clear()

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


def _text(body: bytes) -> str:
    return body.decode("utf-8", "replace")
