"""The event bus between server processes that share one database.

Theory of operation
-------------------
The bus carries only short notes, never events: ``e <sequence> <task id>`` ("task T
has events up to N"), ``c <task id>`` ("whoever runs task T: cancel it") and
``p <task id>`` ("task T's push configs changed: read them again"); a bus also tells
its receiver ``*`` ("catch up on everything": notes may have been missed) and
``* <task id>`` ("catch up on task T"). A process that hears of events it has not seen
reads them from the store by sequence number and hands them to its readers, so the
store stays the one source of truth: a lost note costs latency (the next note of that
task brings the reader up to date), never an event. A process may hear its own notes
too (``PostgresBus`` drops them), and ignores what it already knows.

A process *follows* a task while a reader here waits for events another process may
store (a resubscriber, a cancel passed on): ``Bus.follow`` and ``Bus.unfollow``.
``Bus.wanted`` says whether any other process follows a task: the events notes of the
others are not worth sending. ``PostgresBus`` keeps to that (each process tells the
others what it follows, and reads the task again once each has heard it; the follows of
a process that ended with no bye end once it has been silent for a while); ``RedisBus``
sends every note.

``Bus`` is two calls. ``PostgresBus`` (``parley.stores.sql``) uses PostgreSQL
``LISTEN/NOTIFY`` on the task database, the default for a shared PostgreSQL store;
``RedisBus`` uses Redis pub/sub (``parley serve --bus redis://...``, the ``redis``
extra). A store only one process uses needs no bus.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from parley._extras import require

logger = logging.getLogger("parley.server")

CHANNEL = "parley_events"
_RETRY = 1.0
"""Seconds between attempts to listen again after the connection dropped."""

Receiver = Callable[[str], None]
"""Called with each note heard, on the event loop; must not block."""


class Bus(Protocol):
    async def start(self, receive: Receiver) -> None:
        """Start hearing notes (every process's, this one's too)."""
        ...

    async def send(self, note: str) -> None:
        """Send a note to every process (best effort: a note may be lost)."""
        ...

    def follow(self, task_id: str) -> None:
        """A reader here waits for the task's events, wherever it runs: from now on every
        process that stores events of it sends their note, and this one is told
        ``* <task id>`` once each has heard it (events stored before, unannounced)."""
        ...

    def unfollow(self, task_id: str) -> None:
        """One of the readers that ``follow`` the task is done."""
        ...

    def wanted(self, task_id: str) -> bool:
        """Whether another process follows the task: a note of its events is worth
        sending. Asked right after the events are stored, with no await in between."""
        ...

    async def aclose(self) -> None: ...


class Listener(Protocol):
    """What the notes a process hears say, as calls (``listening`` decodes them)."""

    def events_stored(self, task_id: str, sequence: int | None) -> None:
        """``task_id`` has events up to ``sequence`` in the store (``None``: maybe any,
        told once a follow has been heard by every process)."""

    def cancel_asked(self, task_id: str) -> None:
        """Whoever runs ``task_id``: cancel it."""

    def push_configs_changed(self, task_id: str) -> None:
        """``task_id``'s push configs changed: read them again."""

    def missed(self) -> None:
        """Notes may have been missed: catch up on everything."""


def listening(listener: Listener) -> Receiver:
    """The receiver a bus is started with: each note it hears, decoded into a call of
    ``listener``. A note of a kind not known is ignored."""

    def receive(note: str) -> None:
        kind, _, rest = note.partition(" ")
        if kind == "e":
            sequence, _, task_id = rest.partition(" ")
            listener.events_stored(task_id, int(sequence))
        elif kind == "c":
            listener.cancel_asked(rest)
        elif kind == "p":
            listener.push_configs_changed(rest)
        elif kind == "*" and rest:  # the answer to a follow
            listener.events_stored(rest, None)
        elif kind == "*":
            listener.missed()

    return receive


@runtime_checkable
class GivesBus(Protocol):
    """A store that knows the bus between the processes sharing it (``SQLStore``:
    PostgreSQL's ``LISTEN/NOTIFY``)."""

    def bus(self) -> Bus | None:
        """The bus for this store (``None``: one process uses it, no bus is needed)."""


def bus_of(store: object) -> Bus | None:
    """The bus the store opener gives for ``store``, if any."""
    return store.bus() if isinstance(store, GivesBus) else None


def events_note(task_id: str, sequence: int) -> str:
    return f"e {sequence} {task_id}"


def cancel_note(task_id: str) -> str:
    return f"c {task_id}"


def push_note(task_id: str) -> str:
    return f"p {task_id}"


class Announcer:
    """Tells the other processes over ``bus`` that a task has new events, once they are
    stored: coalesced (one note per task for the events stored while the last notes
    were being sent), in order, by one task at a time."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self._notes: dict[str, int] = {}
        self._sending: asyncio.Task[None] | None = None

    def announce(self, task_id: str, sequence: int) -> None:
        """``task_id`` has events up to ``sequence`` in the store: noted if another
        process follows it."""
        if not self.bus.wanted(task_id):
            return
        self._notes[task_id] = sequence
        if self._sending is None or self._sending.done():
            self._sending = asyncio.create_task(self._send(), name="parley-bus-send")

    async def _send(self) -> None:
        while self._notes:
            notes, self._notes = self._notes, {}
            for task_id, sequence in notes.items():
                await self.bus.send(events_note(task_id, sequence))

    async def aclose(self) -> None:
        """Wait for the last notes (short, and not to be cut in half) for up to 2 s."""
        if self._sending is not None:
            await asyncio.wait([self._sending], timeout=2)


class RedisBus:
    """Notes over Redis pub/sub, on ``url`` (``redis://host:port/db``).

    As ``PostgresBus`` does: if the listening connection drops (Redis restarted, the
    network cut), it is opened again every second and the receiver is told ``"*"``
    (catch up on everything); a note that cannot be sent is logged and dropped (the
    receivers' own reconnection catches them up)."""

    def __init__(self, url: str, channel: str = CHANNEL) -> None:
        require("redis", "RedisBus (--bus redis://)")
        import redis.asyncio
        import redis.exceptions

        self._redis: Any = redis.asyncio.Redis.from_url(url, socket_connect_timeout=_RETRY * 5)
        self._failures: tuple[type[Exception], ...] = (redis.exceptions.RedisError, OSError)
        self._channel = channel
        self._listening: asyncio.Task[None] | None = None

    async def start(self, receive: Receiver) -> None:
        ready = asyncio.get_running_loop().create_future()
        self._listening = asyncio.create_task(self._listen(receive, ready), name="parley-bus")
        await ready

    async def _listen(self, receive: Receiver, ready: asyncio.Future[None]) -> None:
        while True:
            pubsub = self._redis.pubsub()
            try:
                await pubsub.subscribe(self._channel)
                await _subscribed(pubsub)
                if ready.done():
                    receive("*")  # back after a drop: notes may have been missed
                else:
                    ready.set_result(None)
                async for message in pubsub.listen():
                    data = message.get("data")
                    if isinstance(data, bytes):
                        receive(data.decode())
            except self._failures as error:
                if not ready.done():  # could not listen at all: the start fails with it
                    ready.set_exception(error)
                    return
                logger.warning("event bus: lost the Redis connection (%s); reconnecting", error)
            finally:
                await pubsub.aclose()
            await asyncio.sleep(_RETRY)

    async def send(self, note: str) -> None:
        try:
            await self._redis.publish(self._channel, note)
        except self._failures as error:
            logger.warning("event bus: could not send %r over Redis (%s)", note, error)

    def follow(self, task_id: str) -> None:
        """Nothing to do: every note goes out."""

    def unfollow(self, task_id: str) -> None:
        """Nothing to do: every note goes out."""

    def wanted(self, task_id: str) -> bool:
        return True

    async def aclose(self) -> None:
        listening, self._listening = self._listening, None
        if listening is not None:
            listening.cancel()
            await asyncio.gather(listening, return_exceptions=True)
        await self._redis.aclose()


async def _subscribed(pubsub: Any) -> None:
    """Wait for Redis to confirm the subscription: ``subscribe`` only sends the command,
    and a note published before Redis has it reaches no one. Until then the bus has not
    started (or is not back), so no note is missed after it says so. A Redis that does
    not confirm in time is a failure (``TimeoutError`` is an ``OSError``)."""
    async with asyncio.timeout(_RETRY * 5):
        while True:
            message = await pubsub.get_message(timeout=_RETRY)
            if message is not None and message.get("type") == "subscribe":
                return


def open_bus(url: str) -> Bus:
    """The bus ``url`` names: ``redis://...`` (or ``rediss://``). Raises ``ValueError``
    for anything else."""
    if url.startswith(("redis://", "rediss://")):
        return RedisBus(url)
    raise ValueError(f"--bus takes a redis:// URL, not {url!r}")
