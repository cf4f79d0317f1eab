"""The per-task event log that every reader follows at its own pace.

Theory of operation
-------------------
Each live task has one ``EventLog``: a list of the task's events, each with the next
sequence number. The agent appends; it never waits for a reader. A reader (the blocking
caller of ``message/send``, an SSE stream, a resubscriber, later push delivery) holds
nothing but its position and iterates ``read(after)``: it takes what is in the list past
its position, then waits on a future of its own that the next append resolves.

So a reader that stops reading holds back no one: there is no per-reader queue to fill
and nothing for the agent to block on. The only buffer is the log itself, shared by all
readers and bounded by the task's own size. A new reader can start from any position
the log still holds, which is what resubscribe with ``Last-Event-ID`` needs.

The log holds the ``StoredEvent`` entries the store was given, so an event's wire JSON
is made once (``StoredEvent.to_json``), by the store that writes it or the first stream
that sends it, and shared by the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from parley.protocol import ends_interaction
from parley.stores import StoredEvent
from parley.types import Event


class EventLog:
    """Ordered events of one task, numbered from ``start + 1``."""

    __slots__ = ("_closed", "_error", "_events", "_looking", "_start", "_waiters", "loop")

    def __init__(self, start: int = 0) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        """The loop the task's run is on, while one is (``TaskRuns.start`` sets it, the
        run's end clears it; ``None``: not known). Readers' futures are made on it (a
        reader woken by the run is on its loop): on Python 3.11 each
        ``asyncio.get_running_loop()`` is a ``getpid`` system call."""
        self._events: list[StoredEvent] = []
        self._start = start
        self._waiters: list[asyncio.Future[None]] = []
        self._looking: list[tuple[Callable[[Event], bool], asyncio.Future[Event | None]]] = []
        """``first`` callers waiting for an event ``until`` holds for: woken by that event
        (or the close) only, not by every event before it."""
        self._closed = False
        self._error: Exception | None = None

    @property
    def last_sequence(self) -> int:
        """The sequence number of the newest event (``start`` while empty)."""
        return self._start + len(self._events)

    @property
    def closed(self) -> bool:
        return self._closed

    def append(self, event: Event) -> int:
        """Add ``event`` and wake the readers; returns its sequence number."""
        return self.extend((StoredEvent(self.last_sequence + 1, event),))

    def extend(self, stored: Sequence[StoredEvent], ends: bool | None = None) -> int:
        """Add ``stored``, the next events in order, numbered from ``last_sequence + 1``,
        waking the readers once; returns the last sequence number. ``ends``, when the
        caller knows it: whether the last of ``stored`` ends the interaction, and none
        before it does (what a blocking send waits for, not asked of each again)."""
        if self._closed:
            raise RuntimeError("event log is closed")
        if stored[0].sequence != self._start + len(self._events) + 1:
            raise ValueError(f"event {stored[0].sequence} does not follow {self.last_sequence}")
        self._events.extend(stored)
        self._wake()
        if self._looking:
            self._wake_looking(stored, ends)
        return self._start + len(self._events)

    def close(self) -> None:
        """No more events will come; readers finish once they have read everything."""
        self._closed = True
        self._wake()
        if self._looking:
            self._wake_looking(None)

    def fail(self, error: Exception) -> None:
        """No more events will come because of ``error``: readers raise it once they
        have read everything."""
        self._error = error
        self.close()

    def read(self, after: int = 0, until: Callable[[Event], bool] | None = None) -> LogReader:
        """A reader of every event after ``after``, live, in order (see ``LogReader``).

        ``after`` below the start of the log starts at its first event.
        """
        return LogReader(self, after, until)

    async def first(
        self, after: int = 0, until: Callable[[Event], bool] | None = None
    ) -> Event | None:
        """The first event after ``after`` for which ``until`` holds (the very next one
        when ``until`` is None), waiting for it; ``None`` if the log closes first.

        What a blocking ``message/send`` waits with: ``read`` without the async
        generator, which costs a request more than the wait itself.
        """
        index = max(after - self._start, 0)
        while True:
            events = self._events
            while index < len(events):
                event = events[index].event
                index += 1
                if until is None or until(event):
                    return event
            if self._closed:
                if self._error is not None:
                    raise self._error
                return None
            if until is None:
                await self._changed()
                continue
            looking: asyncio.Future[Event | None] = (
                self.loop or asyncio.get_running_loop()
            ).create_future()
            self._looking.append((until, looking))
            found = await looking
            if found is not None:
                return found

    def _wake_looking(self, events: Sequence[StoredEvent] | None, ends: bool | None = None) -> None:
        """Wake the ``first`` callers one of ``events`` is for, with the first of them
        that ``until`` holds for (every one at the close, with ``None``); ``ends`` as
        ``extend`` takes it."""
        still: list[tuple[Callable[[Event], bool], asyncio.Future[Event | None]]] = []
        for until, looking in self._looking:
            if looking.done():  # a canceled caller (its client left) is dropped
                continue
            if events is None:
                looking.set_result(None)
                continue
            if until is ends_interaction and ends is not None:
                if ends:
                    looking.set_result(events[-1].event)
                else:
                    still.append((until, looking))
                continue
            for stored in events:
                if until(stored.event):
                    looking.set_result(stored.event)
                    break
            else:
                still.append((until, looking))
        self._looking = still

    async def _changed(self) -> None:
        """Wait for the next append or the close."""
        await self._waiter()

    def _waiter(self) -> asyncio.Future[None]:
        """A future the next append or the close resolves. One per waiting reader: one
        that is canceled (its client went away) cancels only its own."""
        waiter = (self.loop or asyncio.get_running_loop()).create_future()
        self._waiters.append(waiter)
        return waiter

    def _wake(self) -> None:
        waiters = self._waiters
        if waiters:
            self._waiters = []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)


class LogReader:
    """One reader of an ``EventLog``: an async iterator of ``(sequence, event)``.

    Ends when the log is closed and fully read (raising the error it failed with, if it
    did), or after the first event ``until`` holds for. A writer that can send several
    events at once (an SSE response) reads with ``take`` and ``wait`` instead: everything
    ready is taken in one go, and one wake-up serves every event appended meanwhile.
    """

    __slots__ = ("_done", "_index", "_log", "_until")

    def __init__(
        self, log: EventLog, after: int = 0, until: Callable[[Event], bool] | None = None
    ) -> None:
        self._log = log
        self._index = max(after - log._start, 0)
        self._until = until
        self._done = False

    @property
    def done(self) -> bool:
        """Whether the reading has ended (nothing more will be taken)."""
        return self._done

    def take(self) -> list[StoredEvent]:
        """Every event ready now, in order; empty when none is (or the reading ended).

        Raises the error the log failed with once every event before it was taken.
        """
        events, index = self._log._events, self._index
        if self._done or index >= len(events):
            self._check_end()
            return []
        taken = events[index:]
        until = self._until
        if until is not None:
            for at, stored in enumerate(taken):
                if until(stored.event):
                    self._done = True
                    del taken[at + 1 :]
                    break
        self._index = index + len(taken)
        return taken

    async def wait(self) -> None:
        """Wait until there is something to take, or the reading ends."""
        waiter = self.waiter()
        if waiter is not None:
            await waiter

    def waiter(self) -> asyncio.Future[None] | None:
        """A future to await until there is something to take or the reading ends;
        ``None`` when there is already (what ``wait`` awaits, for a caller that wants to
        look at it meanwhile)."""
        log = self._log
        if self._done or self._index < len(log._events) or log._closed:
            return None
        return log._waiter()

    def __aiter__(self) -> LogReader:
        return self

    async def __anext__(self) -> tuple[int, Event]:
        log = self._log
        while not self._done:
            index = self._index
            if index < len(log._events):
                stored = log._events[index]
                self._index = index + 1
                if self._until is not None and self._until(stored.event):
                    self._done = True
                return stored.sequence, stored.event
            if log._closed:
                self._check_end()
                break
            await log._changed()
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Stop reading (nothing to let go: the reader holds only its position)."""
        self._done = True

    def _check_end(self) -> None:
        log = self._log
        if not self._done and log._closed and self._index >= len(log._events):
            self._done = True
            if log._error is not None:
                raise log._error
