"""``PostgresBus``: the server's event bus over PostgreSQL ``LISTEN/NOTIFY``.

One connection of the store's engine is kept for listening, one for sending. ``send``
queues its note and returns; one sender task sends every note queued so far in one
statement (a transaction that writes nothing, so it waits for no disk flush), outside
the transactions that store the events: a ``NOTIFY`` in those would make their commits
wait for each other (PostgreSQL serialises notifying commits). If the listening
connection drops, it is opened again and the receiver is told ``"*"`` (catch up on
everything), since notes may have been missed meanwhile.

A process's own notes come back to it too: the listener drops those sent from its own
sending connection (PostgreSQL tags each note with the server process that sent it), so
the process that sent a note does not parse it and look its task up again.

Notes go out only while another process listens: a process alone on its database (the
common case) sends none, which spares a transaction, a round trip and PostgreSQL's
work for each batch of notes. PostgreSQL does not say who listens on a channel, so the
buses tell each other, by their ids: ``h <id>`` ("hello", when a bus starts listening,
again after listening anew, and after a note could not be sent) is answered by every
other bus with ``a <id>``; a bus answered by one it did not know answers it back once;
``b <id>`` ("bye") when a bus closes. A bus that hears a hello or an answer counts its
sender as a peer and tells its receiver ``"*"`` (catch up on everything): the sender
may have kept notes back before it knew of this bus, and said so only after, so after
any note it kept back, whose events were stored before; catching up then reads them
all. A peer that ends without its bye (a crash) stays counted: notes keep going out,
which costs time, never a note.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

logger = logging.getLogger("parley.server")

CHANNEL = "parley_events"
_RETRY = 1.0
_GREETINGS = ("h ", "a ", "b ")
_NOTIFY = "SELECT pg_notify($1, note) FROM unnest($2::text[]) AS note"


class PostgresBus:
    """Notes between processes sharing the PostgreSQL database of ``engine``."""

    def __init__(self, engine: AsyncEngine, channel: str = CHANNEL) -> None:
        self._engine = engine
        self._channel = channel
        self._listening: asyncio.Task[None] | None = None
        self._sending: AsyncConnection | None = None
        self._queued: list[str] = []
        self._sender: asyncio.Task[None] | None = None
        self._sending_pid = 0
        """The server process of the sending connection: notes from it are our own."""
        self._id = uuid.uuid4().hex
        """This bus's name in its hello and bye."""
        self._peers: set[str] = set()
        """The other buses heard from (by their hello or answer), not gone (by a bye)."""
        self._again: asyncio.TimerHandle | None = None
        """A hello to send again: one could not be sent."""

    @property
    def peers(self) -> int:
        """How many other processes' buses listen, as far as this one has heard: notes
        are sent only when there is one."""
        return len(self._peers)

    async def start(self, receive: Callable[[str], None]) -> None:
        ready = asyncio.get_running_loop().create_future()
        self._listening = asyncio.create_task(self._listen(receive, ready), name="parley-bus")
        await ready

    async def _listen(self, receive: Callable[[str], None], ready: asyncio.Future[None]) -> None:
        def heard(connection: Any, pid: int, channel: str, payload: str) -> None:
            if pid == self._sending_pid:
                return
            kind, _, peer = payload.partition(" ")
            if kind in ("h", "a"):
                self._met(peer, kind == "h", receive)
            elif kind == "b":
                self._peers.discard(peer)
            else:
                receive(payload)

        while True:
            try:
                async with self._engine.connect() as connection:
                    raw = await connection.get_raw_connection()
                    driver: Any = raw.driver_connection
                    await driver.add_listener(self._channel, heard)
                    self._hello()
                    if ready.done():
                        receive("*")  # back after a drop: notes may have been missed
                    else:
                        ready.set_result(None)
                    closed = _termination(driver)
                    await closed
                    # not back to the pool, where the store's next write would meet it
                    await connection.invalidate()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                if not ready.done():  # could not listen at all: the start fails with it
                    ready.set_exception(error)
                    return
                logger.warning(
                    "event bus: lost the PostgreSQL connection (%s); reconnecting", error
                )
            await asyncio.sleep(_RETRY)

    def _met(self, peer: str, hello: bool, receive: Callable[[str], None]) -> None:
        """``peer`` listens (and may have kept notes back before it knew of this bus);
        answer its hello, or its answer when it was not known (it may not know this
        bus: its hello before this bus listened)."""
        if hello or peer not in self._peers:
            self._peers.add(peer)
            self._queue(f"a {self._id}")
        receive("*")

    async def send(self, note: str) -> None:
        """Queue ``note`` if another process listens; the sender task sends it with
        the others queued meanwhile."""
        if self._peers:
            self._queue(note)

    def _hello(self) -> None:
        if self._again is not None:
            self._again.cancel()
            self._again = None
        self._queue(f"h {self._id}")

    def _queue(self, note: str) -> None:
        self._queued.append(note)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send_queued(), name="parley-bus-send")

    async def _send_queued(self) -> None:
        while self._queued:
            notes, self._queued = self._queued, []
            try:
                if self._sending is None:
                    self._sending = await self._engine.connect()
                raw = await self._sending.get_raw_connection()
                driver: Any = raw.driver_connection
                self._sending_pid = driver.get_server_pid()
                await driver.execute(_NOTIFY, self._channel, notes)
            except Exception:
                logger.exception("event bus: could not send %d notes", len(notes))
                if any(note[:2] in _GREETINGS for note in notes) and self._again is None:
                    # who listens is learnt again from the answers to a hello
                    self._again = asyncio.get_running_loop().call_later(_RETRY, self._hello)
                sending, self._sending = self._sending, None
                if sending is not None:
                    await sending.invalidate()
                    await sending.close()

    async def aclose(self) -> None:
        if self._again is not None:
            self._again.cancel()
        if self._peers:
            self._queue(f"b {self._id}")
        sender = self._sender
        if sender is not None and not sender.done():  # the last notes, not cut in half
            await asyncio.wait([sender], timeout=2)
        listening, self._listening = self._listening, None
        if listening is not None:
            listening.cancel()
            await asyncio.gather(listening, return_exceptions=True)
        sending, self._sending = self._sending, None
        if sending is not None:
            await sending.close()


def _termination(driver: Any) -> asyncio.Future[None]:
    """A future that is done when the driver connection closes."""
    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def terminated(_: Any) -> None:
        if not closed.done():
            closed.set_result(None)

    driver.add_termination_listener(terminated)
    return closed
