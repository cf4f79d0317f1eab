"""The Redis bus through a cut: a real Redis (127.0.0.1:6379) behind a TCP proxy the
test cuts and restores, as a Redis restart or a network cut would.

The bus promises what ``PostgresBus`` does: a note that cannot be sent is logged and
dropped, never an error to the caller that sent it (a push config set while Redis is
down is stored and answered); the listening side reconnects and tells its receiver
``"*"`` (catch up on everything), since notes may have been lost meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from parley.client import connect
from parley.server import RedisBus, create_app
from parley.server.push import PushSettings
from parley.types import (
    AgentCapabilities,
    PushNotificationConfig,
    Task,
    TaskPushNotificationConfig,
)
from tests.server.agents import ScriptedAgent, card
from tests.servers import running

REDIS_PORT = 6379


class Cut:
    """A TCP proxy to the local Redis, on a thread and event loop of its own (so it
    serves while the test's loop waits on a server starting), that can be cut and opened
    again on its port."""

    def __init__(self) -> None:
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._accepted: set[asyncio.BaseTransport] = set()
        """Every connection accepted, from the moment it is: a pipe task cancelled before
        it first runs never reaches its ``finally``, so its socket is closed from here."""

    async def open(self) -> None:
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._open(), self._loop))

    async def cut(self) -> None:
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._cut(), self._loop))

    def close(self) -> None:
        """Cut, end every pipe (each closes its sockets), then stop the loop: no socket
        is left for the garbage collector to find open (a ``ResourceWarning`` in
        whichever test runs next)."""
        asyncio.run_coroutine_threadsafe(self._shut(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _shut(self) -> None:
        await self._cut()
        pipes = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for pipe in pipes:
            pipe.cancel()
        await asyncio.gather(*pipes, return_exceptions=True)
        for transport in self._accepted:
            transport.close()
        await asyncio.sleep(0)  # close() lets go of the socket on the loop's next turn

    async def _open(self) -> None:
        def accept() -> asyncio.Protocol:
            return _Accepted(asyncio.StreamReader(), self._pipe, self._accepted)

        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(accept, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _cut(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        writers = list(self._writers)
        for writer in writers:
            writer.close()
        for writer in writers:
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
        if server is not None:
            await server.wait_closed()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            upstream_reader, upstream = await asyncio.open_connection("127.0.0.1", REDIS_PORT)
        except BaseException:
            self._writers.discard(writer)
            writer.close()
            raise
        self._writers.add(upstream)
        try:
            await asyncio.gather(_copy(reader, upstream), _copy(upstream_reader, writer))
        finally:
            for one in (writer, upstream):
                self._writers.discard(one)
                one.close()
            for one in (writer, upstream):
                with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                    await one.wait_closed()


class _Accepted(asyncio.StreamReaderProtocol):
    """``asyncio.start_server``'s protocol, that also records its transport when the
    connection is made (before the pipe task that serves it starts)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        pipe: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
        accepted: set[asyncio.BaseTransport],
    ) -> None:
        super().__init__(reader, pipe)
        self._accepted = accepted

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._accepted.add(transport)
        super().connection_made(transport)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


@pytest.fixture
async def proxy() -> AsyncIterator[Cut]:
    cut = Cut()
    await cut.open()
    try:
        yield cut
    finally:
        cut.close()


async def _until(wanted: Callable[[], bool], seconds: float = 10.0) -> None:
    async with asyncio.timeout(seconds):
        while not wanted():  # noqa: ASYNC110 (what it waits for is a list or a log, no event)
            await asyncio.sleep(0.02)


async def test_the_bus_listens_again_after_a_cut_and_says_catch_up(
    proxy: Cut, caplog: pytest.LogCaptureFixture
) -> None:
    channel = f"parley-test-{uuid.uuid4().hex}"
    heard: list[str] = []
    bus = RedisBus(f"redis://127.0.0.1:{proxy.port}/0", channel)
    other = RedisBus(f"redis://127.0.0.1:{REDIS_PORT}/0", channel)
    await bus.start(heard.append)
    try:
        await other.send("e 1 t")
        await _until(lambda: "e 1 t" in heard)
        with caplog.at_level(logging.WARNING, logger="parley.server"):
            await proxy.cut()
            await bus.send("p t")  # Redis is unreachable: logged, not raised
            await _until(lambda: "lost the Redis connection" in caplog.text)
        assert "could not send 'p t' over Redis" in caplog.text
        assert "*" not in heard
        await proxy.open()
        await _until(lambda: "*" in heard)  # back, and told to catch up
        await other.send("e 2 t")
        await _until(lambda: "e 2 t" in heard)
        assert heard == ["e 1 t", "*", "e 2 t"]
    finally:
        await bus.aclose()
        await other.aclose()


async def test_a_push_config_set_while_redis_is_down_is_stored_and_answered(
    proxy: Cut,
) -> None:
    bus = RedisBus(f"redis://127.0.0.1:{proxy.port}/0", f"parley-test-{uuid.uuid4().hex}")
    push_card = card(capabilities=AgentCapabilities(streaming=True, push_notifications=True))
    app = create_app(ScriptedAgent(), push_card, bus=bus, push=PushSettings(allow=["127.0.0.1/32"]))
    with running(app) as url:
        async with await connect(url) as client:
            task = await client.send_message("ask")  # input-required: the task stays
            assert isinstance(task, Task)
            await proxy.cut()
            config = PushNotificationConfig(id="hook", url="http://127.0.0.1:9/", token="t")
            wanted = TaskPushNotificationConfig(task_id=task.id, push_notification_config=config)
            assert (await client.set_push_config(wanted)).push_notification_config.id == "hook"
            stored = await client.get_push_config(task.id, "hook")
            assert stored.push_notification_config.url == "http://127.0.0.1:9/"
