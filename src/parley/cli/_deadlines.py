"""Deadlines for slow clients: ``parley serve`` closes a connection whose request head,
or whose declared body, does not arrive in time.

uvicorn bounds only the idle time between requests (``timeout_keep_alive``): a client
that sends its head one byte at a time, or declares a body and trickles it, holds its
connection for as long as it likes, and a few hundred such clients hold the server's
file descriptors. Each connection here owns at most one timer, armed when a request
starts to arrive (or the connection opens) and released when its head is in (then armed
again for the body, if one is declared), when the whole request is in, when the timer
fires, and when the connection is lost. Only the arrival of the request is timed: an
answer, however long it streams, never is.

The timing is added to uvicorn's own HTTP/1.1 protocols (httptools when installed, as
uvicorn's ``auto`` picks, else h11) by subclassing them: their parsers say when a head
and a body are complete.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
from typing import Any, Literal

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_HEAD_TIMEOUT = 10.0
"""Seconds a request's head (request line and headers) may take to arrive."""
DEFAULT_BODY_TIMEOUT = 30.0
"""Seconds a request's declared body may take to arrive once its head is in."""

_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\n"
    b"content-length: 38\r\n"
    b"\r\n"
    b"The request did not arrive in time.\r\n"
)

Stage = Literal["head", "body"]


class DeadlineConfig(uvicorn.Config):
    """uvicorn's settings, and how long a request's head and body may take to arrive;
    the HTTP protocol is uvicorn's (``http``: auto, h11 or httptools) with deadlines."""

    def __init__(
        self,
        app: Any,
        *,
        head_timeout: float = DEFAULT_HEAD_TIMEOUT,
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        **settings: Any,
    ) -> None:
        settings["http"] = timed_protocol(settings.get("http", "auto"))
        super().__init__(app, **settings)
        self.head_timeout = head_timeout
        self.body_timeout = body_timeout


class _Deadline:
    """The one timer of a connection: which part of the request it waits for."""

    def __init__(self, protocol: Any) -> None:
        self.protocol = protocol
        self.stage: Stage | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.waiting: Stage | None = None
        """The part of the request still to arrive, as the parser last said (``settle``
        times it)."""

    def settle(self) -> None:
        """After a read: time the part of the request still to arrive, if any. A request
        whose head and body came in the read it began in never needs a timer."""
        waiting = self.waiting
        if waiting is None:
            if self.timer is not None:
                self.release()
        elif waiting != self.stage:
            self.arm(waiting)

    def arm(self, stage: Stage) -> None:
        self.release()
        config = self.protocol.config
        seconds = config.head_timeout if stage == "head" else config.body_timeout
        self.stage = stage
        self.timer = self.protocol.loop.call_later(seconds, self.expire)

    def release(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = None
        self.stage = None

    def expire(self) -> None:
        stage, self.timer, self.stage = self.stage, None, None
        transport = self.protocol.transport
        if transport.is_closing():
            return
        if stage == "head":  # nothing of the request reached the app: say why
            transport.write(_TIMED_OUT)
        # mid-body the app is waiting in receive(): the close reaches it as a disconnect
        transport.close()


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with request deadlines (h11's state says where the
    request stands after each read)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.deadline = _Deadline(self)
        super().connection_made(transport)
        self.deadline.arm("head")

    def data_received(self, data: bytes) -> None:
        if self.deadline.stage is None and self.conn.their_state is h11.IDLE:
            self.deadline.arm("head")
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self.deadline.stage != "body":
                self.deadline.arm("body")
        elif state is not h11.IDLE:
            self.deadline.release()  # all in, or the connection is ending

    def connection_lost(self, exc: Exception | None) -> None:
        self.deadline.release()
        super().connection_lost(exc)


@functools.cache
def _httptools_protocol() -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class TimedHttpToolsProtocol(HttpToolsProtocol):
        """uvicorn's httptools protocol with request deadlines: the parser's callbacks
        say when a request begins, when its head is in, and when all of it is, and after
        each read the part still to arrive is timed."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self.deadline = _Deadline(self)
            super().connection_made(transport)
            self.deadline.waiting = "head"
            self.deadline.arm("head")

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self.deadline.settle()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self.deadline.waiting = "head"

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self.deadline.waiting = "body"

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self.deadline.waiting = None

        def connection_lost(self, exc: Exception | None) -> None:
            self.deadline.release()
            super().connection_lost(exc)

    return TimedHttpToolsProtocol


def timed_protocol(http: str = "auto") -> type[asyncio.Protocol]:
    """The HTTP/1.1 protocol class with deadlines: httptools' for ``auto`` when it is
    installed (as uvicorn picks), else h11's."""
    wants_httptools = http == "httptools" or (
        http == "auto" and importlib.util.find_spec("httptools") is not None
    )
    return _httptools_protocol() if wants_httptools else TimedH11Protocol
