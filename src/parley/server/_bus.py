"""The event bus between server processes that share one database.

Theory of operation
-------------------
The bus carries only short notes, never events: ``e <sequence> <task id>`` ("task T
has events up to N"), ``c <task id>`` ("whoever runs task T: cancel it") and
``p <task id>`` ("task T's push configs changed: read them again"). A process
that hears of events it has not seen reads them from the store by sequence number and
hands them to its readers, so the store stays the one source of truth: a lost note
costs latency (the next note of that task brings the reader up to date), never an
event. A process may hear its own notes too (``PostgresBus`` drops them), and ignores
what it already knows.

``Bus`` is two calls. ``PostgresBus`` (``parley.stores.sql``) uses PostgreSQL
``LISTEN/NOTIFY`` on the task database, the default for a shared PostgreSQL store;
``RedisBus`` uses Redis pub/sub (``parley serve --bus redis://...``, the ``redis``
extra). A store only one process uses needs no bus.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

logger = logging.getLogger("parley.server")

CHANNEL = "parley_events"

Receiver = Callable[[str], None]
"""Called with each note heard, on the event loop; must not block."""


class Bus(Protocol):
    async def start(self, receive: Receiver) -> None:
        """Start hearing notes (every process's, this one's too)."""
        ...

    async def send(self, note: str) -> None:
        """Send a note to every process (best effort: a note may be lost)."""
        ...

    async def aclose(self) -> None: ...


def events_note(task_id: str, sequence: int) -> str:
    return f"e {sequence} {task_id}"


def cancel_note(task_id: str) -> str:
    return f"c {task_id}"


def push_note(task_id: str) -> str:
    return f"p {task_id}"


class RedisBus:
    """Notes over Redis pub/sub, on ``url`` (``redis://host:port/db``)."""

    def __init__(self, url: str, channel: str = CHANNEL) -> None:
        try:
            import redis.asyncio
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise ImportError(
                "--bus redis:// needs the redis extra: pip install 'parley[redis]'"
            ) from error
        self._redis: Any = redis.asyncio.Redis.from_url(url)
        self._channel = channel
        self._listening: asyncio.Task[None] | None = None

    async def start(self, receive: Receiver) -> None:
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(self._channel)
        self._listening = asyncio.create_task(self._listen(pubsub, receive), name="parley-bus")

    async def _listen(self, pubsub: Any, receive: Receiver) -> None:
        try:
            async for message in pubsub.listen():
                data = message.get("data")
                if isinstance(data, bytes):
                    receive(data.decode())
        finally:
            await pubsub.aclose()

    async def send(self, note: str) -> None:
        await self._redis.publish(self._channel, note)

    async def aclose(self) -> None:
        listening, self._listening = self._listening, None
        if listening is not None:
            listening.cancel()
            await asyncio.gather(listening, return_exceptions=True)
        await self._redis.aclose()


def open_bus(url: str) -> Bus:
    """The bus ``url`` names: ``redis://...`` (or ``rediss://``). Raises ``ValueError``
    for anything else."""
    if url.startswith(("redis://", "rediss://")):
        return RedisBus(url)
    raise ValueError(f"--bus takes a redis:// URL, not {url!r}")
