"""A webhook the checks listen on, to see an agent's push notifications arrive.

Plain HTTP/1.1 (h11, which httpx already brings) on an address the agent can reach:
each POST is recorded by its path and answered 200, whatever it holds; judging it is
the check's business. Each check sets a config with a path of its own and waits there.

Connections are served by an ``asyncio.Protocol``, callbacks and no tasks, so leaving
the receiver has no accept or handler task to cancel halfway (a cancelled accept can
drop the socket it had just accepted): it closes every connection it has, again for a
few loop turns, since asyncio makes a connection accepted at the close a turn later.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from types import TracebackType

import anyio
import h11

_MAX_BODY = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """Listens on ``host:port`` (0: a free port) while entered; ``url`` is what the
    agent is told (``public_url`` when the agent reaches it by another name)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, public_url: str | None = None):
        self.host, self.port, self.public_url = host, port, public_url
        self.deliveries: dict[str, list[Delivery]] = {}
        self._arrived = anyio.Event()
        self._server: asyncio.Server | None = None
        self._connections: set[_Connection] = set()
        self.closed = False

    @property
    def url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    async def __aenter__(self) -> Receiver:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Connection(self), self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self.closed = True
        self._server.close()
        with anyio.CancelScope(shield=True):
            await self._server.wait_closed()
            # a connection accepted just before the close is made a turn or two later
            for _ in range(5):
                for connection in list(self._connections):
                    connection.close()
                await asyncio.sleep(0.01)

    async def wait(self, path: str, seconds: float) -> list[Delivery]:
        """The deliveries to ``path``, once there is one (or none after ``seconds``)."""
        with anyio.move_on_after(seconds):
            while not self.deliveries.get(path):
                arrived = self._arrived
                await arrived.wait()
        return list(self.deliveries.get(path, ()))

    def received(self, delivery: Delivery) -> None:
        self.deliveries.setdefault(delivery.path, []).append(delivery)
        self._arrived.set()
        self._arrived = anyio.Event()


class _Connection(asyncio.Protocol):
    def __init__(self, receiver: Receiver) -> None:
        self.receiver = receiver
        self.h11 = h11.Connection(h11.SERVER)
        self.transport: asyncio.Transport | None = None
        self.request: h11.Request | None = None
        self.body = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self.receiver.closed:  # accepted as the receiver closed: not served
            transport.close()
            return
        self.receiver._connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.receiver._connections.discard(self)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        try:
            self.h11.receive_data(data)
            self._events()
        except h11.RemoteProtocolError:
            self.close()

    def _events(self) -> None:
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                return
            if isinstance(event, h11.Request):
                self.request = event
            elif isinstance(event, h11.Data):
                self.body += event.data
                if len(self.body) > _MAX_BODY:
                    return self.close()
            elif isinstance(event, h11.EndOfMessage) and self.request is not None:
                return self._answer(self.request)
            else:
                return self.close()

    def _answer(self, request: h11.Request) -> None:
        headers = {k.decode().lower(): v.decode(errors="replace") for k, v in request.headers}
        path = request.target.decode(errors="replace")
        self.receiver.received(Delivery(path, headers, self.body))
        answer = h11.Response(status_code=200, headers=[("content-length", "0")])
        assert self.transport is not None
        self.transport.write(self.h11.send(answer) + self.h11.send(h11.EndOfMessage()))
        self.close()
