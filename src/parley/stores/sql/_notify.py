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
all.

A bus says ``k <id>`` ("still here") every beat (5 s) while another listens, and takes
a peer it has not heard from for three beats (by any note carrying its id) for gone, as
if it had said bye: so a process that ends with no bye (SIGKILL, a machine lost) is
forgotten, and its follows with it, and notes stop going out for them. Silence means
nothing while this bus does not listen (the peers' clocks start again when it listens
anew). Taking a live peer for gone (a stall, a hello missed) costs latency, never a
note: the bus then says hello, which every live peer answers with its follows, each
answered in turn, so each follower reads its tasks again; and a ``k`` from a peer not
known gets a hello too.

Events notes go out only for the tasks another process follows (``follow``: a reader
there waits for them), so two processes that each run their own tasks send none.
``f <id> <n> <task>`` says that bus ``<id>`` follows the task, ``u <id> <n> <task>``
that it stopped (``<n>`` counts, so that PostgreSQL, which delivers one of identical
notes sent in one transaction, never folds a follow into an earlier one). A bus that
hears a follow answers ``r <id> <task>`` ("read it now"): it noted nothing of the
task's events stored before it heard the follow, and those were stored before its
answer, so the follower, told ``"* <task>"`` on the answer, reads them all; from the
follow on, every events note of the task goes out (``wanted`` is asked right after
the events are stored). A bus sends its follows again with each hello it says (after
listening anew, after a note could not be sent) and to each peer that says hello or
that it did not know (a process restarted, or one that did not hear them while its
listener was down). A follower that ends without its bye is forgotten with its follows
once silent for three beats (above).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

logger = logging.getLogger("parley.server")

CHANNEL = "parley_events"
_RETRY = 1.0
_NOTIFY = "SELECT pg_notify($1, note) FROM unnest($2::text[]) AS note"
_FOLLOWS = ("f", "u", "r")
_BEAT = 5.0
"""Seconds between a bus's "still here" notes (``k <id>``), while another listens."""
_SILENT_BEATS = 3
"""A peer not heard from for this many beats is taken for gone (ended with no bye)."""


class PostgresBus:
    """Notes between processes sharing the PostgreSQL database of ``engine``."""

    def __init__(self, engine: AsyncEngine, channel: str = CHANNEL, beat: float = _BEAT) -> None:
        self._engine = engine
        self._channel = channel
        self._beat = beat
        self._listening: asyncio.Task[None] | None = None
        self._beating: asyncio.Task[None] | None = None
        self._hearing = False
        """Listening now: silence means something (not while listening anew)."""
        self._sending: AsyncConnection | None = None
        self._queued: list[str] = []
        self._sender: asyncio.Task[None] | None = None
        self._sending_pid = 0
        """The server process of the sending connection: notes from it are our own."""
        self._listening_pid = 0
        """The server process of the listening connection."""
        self._id = uuid.uuid4().hex
        """This bus's name in its hello and bye."""
        self._peers: dict[str, float] = {}
        """The other buses heard from (by their hello or answer), not gone (by a bye, or
        silent too long): when each was last heard from (``time.monotonic``)."""
        self._again: asyncio.TimerHandle | None = None
        """A hello to send again: a note could not be sent."""
        self._following: dict[str, int] = {}
        """Task id -> how many readers here follow it."""
        self._followers: dict[str, set[str]] = {}
        """Task id -> the other buses that follow it (by their follows)."""
        self._said = 0
        """How many follows and unfollows this bus has said (each note's ``<n>``)."""
        self._closed = False
        """Closing: nothing more is queued (the bye is the last note)."""

    @property
    def peers(self) -> int:
        """How many other processes' buses listen, as far as this one has heard: notes
        are sent only when there is one."""
        return len(self._peers)

    async def start(self, receive: Callable[[str], None]) -> None:
        ready = asyncio.get_running_loop().create_future()
        self._listening = asyncio.create_task(self._listen(receive, ready), name="parley-bus")
        await ready
        self._beating = asyncio.create_task(self._beats(), name="parley-bus-beat")

    async def _listen(self, receive: Callable[[str], None], ready: asyncio.Future[None]) -> None:
        def heard(connection: Any, pid: int, channel: str, payload: str) -> None:
            if pid == self._sending_pid:
                return
            kind, _, rest = payload.partition(" ")
            if kind in _FOLLOWS:
                self._followed(kind, rest, receive)
            elif kind in ("h", "a"):
                self._met(rest, kind == "h", receive)
            elif kind == "k":
                self._alive(rest)
            elif kind == "b":
                self._gone(rest)
            else:
                receive(payload)

        while True:
            try:
                async with self._engine.connect() as connection:
                    raw = await connection.get_raw_connection()
                    driver: Any = raw.driver_connection
                    await driver.add_listener(self._channel, heard)
                    self._listening_pid = driver.get_server_pid()
                    self._hello()
                    self._listening_anew()
                    if ready.done():
                        receive("*")  # back after a drop: notes may have been missed
                    else:
                        ready.set_result(None)
                    try:
                        await _termination(driver)
                    finally:
                        self._hearing = False
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
        known = peer in self._peers
        self._peers[peer] = time.monotonic()
        if hello or not known:
            self._queue(f"a {self._id}")
            self._queue_follows()
        receive("*")

    def _alive(self, peer: str) -> None:
        """``peer`` is still here. One this bus does not know took it for gone, or was
        not heard meeting it: a hello makes them meet again, its follows with it."""
        if peer in self._peers:
            self._peers[peer] = time.monotonic()
        else:
            self._hello()

    def _gone(self, peer: str) -> None:
        """``peer`` said bye: it listens no more, and follows nothing."""
        self._peers.pop(peer, None)
        for task_id in [t for t, peers in self._followers.items() if peer in peers]:
            self._stop_following(task_id, peer)

    def _followed(self, kind: str, note: str, receive: Callable[[str], None]) -> None:
        """A follow (answered), an unfollow, or the answer to a follow of this bus."""
        peer, _, rest = note.partition(" ")
        if kind == "r":  # ``r <id> <task>``: ``<id>`` is the follower's, not the sender's
            if peer == self._id and rest in self._following:
                receive(f"* {rest}")
            return
        task_id = rest.partition(" ")[2]  # ``f|u <id> <n> <task>``
        if peer in self._peers:
            self._peers[peer] = time.monotonic()
        if kind == "f":
            self._followers.setdefault(task_id, set()).add(peer)
            self._queue(f"r {peer} {task_id}")
        else:
            self._stop_following(task_id, peer)

    def _stop_following(self, task_id: str, peer: str) -> None:
        peers = self._followers.get(task_id)
        if peers is not None:
            peers.discard(peer)
            if not peers:
                del self._followers[task_id]

    def follow(self, task_id: str) -> None:
        """A reader here waits for the task's events (see ``Bus.follow``)."""
        readers = self._following.get(task_id, 0)
        self._following[task_id] = readers + 1
        if not readers and self._peers:  # a peer met later is told with the others
            self._queue(self._follow_note("f", task_id))

    def unfollow(self, task_id: str) -> None:
        readers = self._following.get(task_id, 0) - 1
        if readers > 0:
            self._following[task_id] = readers
            return
        self._following.pop(task_id, None)
        if self._peers:
            self._queue(self._follow_note("u", task_id))

    def wanted(self, task_id: str) -> bool:
        """Whether another process follows the task (see ``Bus.wanted``)."""
        return task_id in self._followers

    def _follow_note(self, kind: str, task_id: str) -> str:
        self._said += 1
        return f"{kind} {self._id} {self._said} {task_id}"

    def _queue_follows(self) -> None:
        for task_id in self._following:
            self._queue(self._follow_note("f", task_id))

    async def send(self, note: str) -> None:
        """Queue ``note`` if another process listens; the sender task sends it with
        the others queued meanwhile."""
        if self._peers:
            self._queue(note)

    def _listening_anew(self) -> None:
        """Silence while not listening says nothing of the peers: their clocks start
        again (the hello just said makes each answer)."""
        self._hearing = True
        now = time.monotonic()
        for peer in self._peers:
            self._peers[peer] = now

    async def _beats(self) -> None:
        """Say "still here" every beat while another listens, and take the peers not
        heard from for ``_SILENT_BEATS`` beats for gone."""
        while True:
            await asyncio.sleep(self._beat)
            if self._peers:
                self._queue(f"k {self._id}")
            if self._hearing:
                self._expire(time.monotonic() - self._beat * _SILENT_BEATS)

    def _expire(self, silent_since: float) -> None:
        """Forget the peers last heard before ``silent_since`` (ended with no bye: their
        follows would be noted forever), and the follows of peers not known. Wrongly,
        maybe (a stall, notes lost): so say hello, which every live peer answers with
        its follows, each answered in turn, so its readers read their tasks again."""
        silent = [peer for peer, heard in self._peers.items() if heard < silent_since]
        for peer in silent:
            del self._peers[peer]
        dropped = False
        for task_id, peers in list(self._followers.items()):
            if not peers <= self._peers.keys():
                dropped = True
                peers.intersection_update(self._peers)
                if not peers:
                    del self._followers[task_id]
        if silent or dropped:
            logger.warning("event bus: %d silent processes taken for gone", len(silent))
            self._hello()

    def _hello(self) -> None:
        if self._again is not None:
            self._again.cancel()
            self._again = None
        self._queue(f"h {self._id}")
        self._queue_follows()

    def _queue(self, note: str) -> None:
        if self._closed:
            return
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
                if self._again is None and not self._closed:
                    # A hello makes good what was lost: who listens is learnt again from
                    # the answers, every peer catches up on everything it follows, and
                    # this bus's follows go with it.
                    self._again = asyncio.get_running_loop().call_later(_RETRY, self._hello)
                sending, self._sending = self._sending, None
                if sending is not None:
                    await sending.invalidate()
                    await sending.close()

    async def aclose(self) -> None:
        # Hearing first: a note heard while closing (an answer, a follow) would start a
        # sender, and a connection, after the sending one is closed.
        for running in (self._beating, self._listening):
            if running is not None:
                running.cancel()
                await asyncio.gather(running, return_exceptions=True)
        self._beating = self._listening = None
        if self._peers:
            self._queue(f"b {self._id}")
        self._closed = True
        if self._again is not None:
            self._again.cancel()
        sender = self._sender
        if sender is not None and not sender.done():  # the last notes, not cut in half
            await asyncio.wait([sender], timeout=2)
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
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
