"""An httpx transport that calls an ASGI app in process and streams its response.

``httpx.ASGITransport`` waits for the app to finish before it returns the response, so
an SSE stream arrives all at once at its end (and a stream that waits for the client
never ends). This one hands the response over as soon as the app starts it and passes
each body chunk on as the app sends it; closing the response tells the app the client
disconnected, as a real server would.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import httpx

ASGIApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[MutableMapping[str, Any]]],
        Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ],
    Awaitable[None],
]

_END = object()


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """Call ``app`` for each request, with no socket; responses stream as they are sent.

    An app that fails before it answers gives HTTP 500 (as a server would); one that
    fails in the middle of a body breaks the stream with ``httpx.ReadError``.
    """

    def __init__(self, app: ASGIApp, *, client: tuple[str, int] = ("127.0.0.1", 50000)) -> None:
        self.app = app
        self.client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        exchange = _Exchange(body)
        exchange.task = asyncio.create_task(self._run(_scope(request, self.client), exchange))
        await exchange.started.wait()
        return httpx.Response(exchange.status, headers=exchange.headers, stream=_Body(exchange))

    async def _run(self, scope: dict[str, Any], exchange: _Exchange) -> None:
        try:
            await self.app(scope, exchange.receive, exchange.send)
        except Exception as error:
            exchange.failed(error)
        finally:
            exchange.chunks.put_nowait(_END)
            exchange.started.set()


class _Exchange:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.body_sent = False
        self.status = 500
        self.headers: list[tuple[bytes, bytes]] = []
        self.started = asyncio.Event()
        self.disconnected = asyncio.Event()
        self.chunks: asyncio.Queue[object] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def receive(self) -> MutableMapping[str, Any]:
        if not self.body_sent:
            self.body_sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.disconnected.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = list(message.get("headers", []))
            self.started.set()
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            if chunk:
                self.chunks.put_nowait(chunk)
            if not message.get("more_body", False):
                self.chunks.put_nowait(_END)

    def failed(self, error: Exception) -> None:
        if self.started.is_set():
            self.chunks.put_nowait(httpx.ReadError(f"the app failed: {error!r}"))
        else:
            self.headers = [(b"content-type", b"text/plain")]
            self.chunks.put_nowait(b"Internal Server Error")


class _Body(httpx.AsyncByteStream):
    def __init__(self, exchange: _Exchange) -> None:
        self.exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            chunk = await self.exchange.chunks.get()
            if chunk is _END:
                return
            if isinstance(chunk, Exception):
                raise chunk
            assert isinstance(chunk, bytes)
            yield chunk

    async def aclose(self) -> None:
        self.exchange.disconnected.set()
        task = self.exchange.task
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 1.0)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _scope(request: httpx.Request, client: tuple[str, int]) -> dict[str, Any]:
    url = request.url
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": url.scheme,
        "path": url.path,
        "raw_path": url.raw_path.split(b"?")[0],
        "query_string": url.query,
        "root_path": "",
        "headers": [(k.lower(), v) for k, v in request.headers.raw],
        "client": client,
        "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
    }
