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
import functools
import logging
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable

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
    """A TCP proxy to the local Redis that can be cut and opened again on its port, on
    threads of its own with blocking sockets, so it serves while the test's loop waits
    on a server starting.

    Not on an event loop: asyncio's accept (CPython 3.11) leaves the socket of a
    connection reset before it is wrapped unclosed (setting ``TCP_NODELAY`` on it fails,
    and the error is swallowed), and the garbage collector's ``ResourceWarning`` then
    fails whichever test runs next. Here every socket is held from the moment
    ``accept`` returns it, and a cut closes them all."""

    def __init__(self, delay: float = 0.0) -> None:
        self.port = 0
        self.delay = delay
        """Seconds each chunk from the client waits before it goes on to Redis."""
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []

    async def open(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self.port = listener.getsockname()[1]
        with self._lock:
            self._listener = listener
        self._start(self._accept, listener)

    async def cut(self) -> None:
        await asyncio.to_thread(self._cut)

    def close(self) -> None:
        """Cut, and wait for every thread of the proxy to end."""
        self._cut()
        for thread in self._threads:
            thread.join(10)

    def _cut(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            held, self._sockets = self._sockets, set()
        for one in (listener, *held) if listener is not None else held:
            _shut(one)

    def _start(self, target: Callable[..., None], *args: socket.socket) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _hold(self, listener: socket.socket, one: socket.socket) -> bool:
        """Hold ``one`` until the next cut, unless ``listener`` was cut already."""
        with self._lock:
            if self._listener is listener:
                self._sockets.add(one)
                return True
        _shut(one)
        return False

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # the listener was cut
                return
            if not self._hold(listener, client):
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", REDIS_PORT), timeout=5)
            except OSError:
                _shut(client)
                continue
            upstream.settimeout(None)
            if not self._hold(listener, upstream):
                _shut(client)
                return
            self._start(functools.partial(_pump, delay=self.delay), client, upstream)
            self._start(_pump, upstream, client)


def _pump(source: socket.socket, sink: socket.socket, delay: float = 0.0) -> None:
    """Copy ``source`` to ``sink`` until either ends, each chunk ``delay`` seconds
    late; then end both (a cut pipe)."""
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            if delay:
                time.sleep(delay)
            sink.sendall(data)
    _shut(source)
    _shut(sink)


def _shut(one: socket.socket) -> None:
    """Close ``one``, waking a thread blocked on it first (``close`` alone does not)."""
    with contextlib.suppress(OSError):
        one.shutdown(socket.SHUT_RDWR)
    one.close()


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


async def test_a_note_sent_right_after_the_bus_started_is_heard() -> None:
    # ``start`` returns once Redis has the subscription, not once the command is sent:
    # here the command reaches Redis 0.3 s late, and a note published directly at once
    # would otherwise reach no one.
    slow = Cut(delay=0.3)
    await slow.open()
    channel = f"parley-test-{uuid.uuid4().hex}"
    heard: list[str] = []
    bus = RedisBus(f"redis://127.0.0.1:{slow.port}/0", channel)
    other = RedisBus(f"redis://127.0.0.1:{REDIS_PORT}/0", channel)
    try:
        await bus.start(heard.append)
        await other.send("e 1 t")
        await _until(lambda: "e 1 t" in heard, seconds=5)
        assert heard == ["e 1 t"]
    finally:
        await bus.aclose()
        await other.aclose()
        slow.close()


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
