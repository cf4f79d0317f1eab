"""The in-memory task store: the library default, and what tests and benchmarks use.

Theory of operation
-------------------
A busy server stores tasks much faster than it forgets them, so this store is built to
cost the garbage collector nothing for what it holds. CPython's collector walks every
container it tracks on a full collection, and a dict is tracked as soon as one value in
it is (a fresh tuple is, an object is); a dict whose keys and values are all strings,
bytes and numbers is not tracked at all. So everything that accumulates is kept in such
dicts:

- a finished task (terminal state) is one ``bytes``: a small fixed header (sequence,
  last touched, state) followed by the task's wire JSON;
- the event log of a finished task is one ``bytes`` too: each event's sequence and wire
  JSON, a line each (kept as long as the task, as the SQL stores keep it);
- a sent message (for idempotent send) is keyed by one string made of its scope and
  message id, and maps to the task id; a direct reply is its wire JSON; the keys of the
  messages sent to one task are one string.

Only tasks still in progress are objects (``_Entry``, with their event log), and there
are as many of those as the server has tasks in flight. The p99 latency of a server
that has stored a few hundred thousand tasks depends on this (the benchmark's 64
connection scenario shows it).
"""

from __future__ import annotations

import itertools
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import TypeAdapter

from parley.protocol import ACTIVE_STATES, is_interrupted, is_terminal
from parley.stores._memory_index import TaskIndex
from parley.stores._memory_side import MemorySide
from parley.stores._protocols import (
    Append,
    Lease,
    LeaseLostError,
    OutboxEntry,
    SentMessage,
    StoredEvent,
    TaskPage,
    TaskQuery,
    TaskSnapshot,
    context_of,
    duplicate,
    lost,
    status_time,
)
from parley.stores._replay import replay
from parley.types import Event, Message, Task, TaskState, TaskStatusUpdateEvent

_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


@dataclass(slots=True)
class _Entry:
    """A task in progress."""

    snapshot: bytes | None = None
    sequence: int = 0
    events: list[StoredEvent] = field(default_factory=list)
    state: TaskState | None = None
    touched: float = field(default_factory=time.time)
    stamp: str | None = None
    """The timestamp of the status the index last filed it at."""


_HEADER = struct.Struct("<qdB")
"""Of a finished task's bytes: sequence, last touched (epoch seconds), state index."""
_STATES = tuple(TaskState)
_STATE_INDEX = {state: index for index, state in enumerate(_STATES)}


def _finished(snapshot: bytes, sequence: int, state: TaskState, touched: float) -> bytes:
    return _HEADER.pack(sequence, touched, _STATE_INDEX[state]) + snapshot


def _unpack(finished: bytes) -> tuple[bytes, int, TaskState, float]:
    """Snapshot, sequence, state and last touched of a finished task."""
    sequence, touched, state = _HEADER.unpack_from(finished)
    return finished[_HEADER.size :], sequence, _STATES[state], touched


def _pack_events(events: Sequence[StoredEvent]) -> bytes:
    return b"\n".join(b"%d %s" % (e.sequence, e.event.to_json()) for e in events)


def _unpack_events(packed: bytes | None) -> list[StoredEvent]:
    if not packed:
        return []
    unpacked = []
    for line in packed.split(b"\n"):
        sequence, _, data = line.partition(b" ")
        unpacked.append(StoredEvent(int(sequence), _EVENT.validate_json(data)))
    return unpacked


def _key(scope: str, message_id: str) -> str:
    """One string for a scope and message id, told apart whatever characters they hold."""
    return f"{len(scope)}:{scope}{message_id}"


def _join(keys: str | None, key: str) -> str:
    """``keys`` with ``key`` added: each key prefixed with its length, so none is split."""
    return f"{keys or ''}{len(key)}:{key}"


def _split(keys: str) -> list[str]:
    split, at = [], 0
    while at < len(keys):
        colon = keys.index(":", at)
        end = colon + 1 + int(keys[at:colon])
        split.append(keys[colon + 1 : end])
        at = end
    return split


class MemoryStore(MemorySide):
    """Tasks kept in this process, gone when it exits: every store protocol.

    Snapshots are kept as their wire JSON rather than as model objects: a small task is a
    few hundred bytes that way instead of several kilobytes of Python objects, and every
    ``get`` hands out a fresh copy that no one else can change. Once a task's terminal
    snapshot is saved its event log is packed into bytes, and kept as long as the task.
    """

    shared = False

    def __init__(self) -> None:
        super().__init__()
        self._done_events: dict[str, bytes] = {}
        """task id -> the packed event log of a finished task (``_pack_events``)."""
        self._owners: dict[str, str] = {}
        """task id -> its owner."""
        self._context_owners: dict[str, str] = {}
        """context id -> its owner (the first owner recorded for a task of it)."""
        self._tasks: dict[str, _Entry] = {}
        self._done: dict[str, bytes] = {}
        self._sent: dict[str, str] = {}
        """message key (``_key``) -> the task id it went to."""
        self._replies: dict[str, bytes] = {}
        """message key -> wire JSON of the agent's direct reply."""
        self._claimed: dict[str, float] = {}
        """message key -> when it was claimed (for expiry)."""
        self._sent_to: dict[str, str] = {}
        """task id -> the keys of the messages sent to it (``_join``)."""
        self._index = TaskIndex()
        """Tasks by last activity, for ``list_tasks``."""

    async def get(self, task_id: str) -> TaskSnapshot | None:
        return self._load(task_id)

    def _load(self, task_id: str) -> TaskSnapshot | None:
        done = self._done.get(task_id)
        if done is not None:
            snapshot, sequence, _, _ = _unpack(done)
            task = Task.model_validate_json(snapshot)
            return TaskSnapshot(task, sequence, self._owners.get(task_id))
        entry = self._tasks.get(task_id)
        if entry is None:
            return None
        stored = None if entry.snapshot is None else Task.model_validate_json(entry.snapshot)
        found = replay(stored, entry.sequence, entry.events)
        owner = self._owners.get(task_id)
        if found is None or owner is None:
            return found
        return TaskSnapshot(found.task, found.sequence, owner)

    async def context_owner(self, context_id: str) -> str | None:
        return self._context_owners.get(context_id)

    async def save(self, task: Task, sequence: int, *, owner: str | None = None) -> None:
        self._save(task, sequence, owner)

    def _own(self, task_id: str, context_id: str | None, owner: str | None) -> None:
        if owner is not None:
            self._owners.setdefault(task_id, owner)
            if context_id:
                self._context_owners.setdefault(context_id, owner)

    def _save(self, task: Task, sequence: int, owner: str | None = None) -> None:
        self._own(task.id, task.context_id, owner)
        state, stamp = task.status.state, task.status.timestamp
        now = time.time()
        known = self._tasks.get(task.id)
        moved = known is None or known.stamp != stamp or known.state is not state
        self._index.touch(
            task.id,
            task.context_id,
            state,
            status_time(task.status) if moved else None,
            self._owners.get(task.id),
        )
        if is_terminal(state):
            finished = self._tasks.pop(task.id, None)
            if finished is not None and finished.events:
                self._done_events[task.id] = _pack_events(finished.events)
            self._done[task.id] = _finished(task.to_json(), sequence, state, now)
            return
        entry = self._entry(task.id)
        entry.snapshot, entry.sequence = task.to_json(), sequence
        entry.state, entry.touched, entry.stamp = state, now, stamp

    def _entry(self, task_id: str) -> _Entry:
        entry = self._tasks.get(task_id)
        if entry is not None:
            return entry
        done = self._done.pop(task_id, None)
        if done is None:
            entry = _Entry()
        else:
            snapshot, sequence, state, _ = _unpack(done)
            events = _unpack_events(self._done_events.pop(task_id, None))
            entry = _Entry(snapshot, sequence, events, state)
        self._tasks[task_id] = entry
        return entry

    async def append(
        self,
        task_id: str,
        events: Sequence[StoredEvent],
        *,
        outbox: Sequence[OutboxEntry] = (),
        lease: Lease | None = None,
        snapshot: Task | None = None,
        release: bool = False,
        owner: str | None = None,
    ) -> None:
        await self.append_many((Append(task_id, events, outbox, lease, snapshot, release, owner),))

    async def append_many(self, batch: Sequence[Append]) -> None:
        # Every check first, then every change: all or nothing, with no await between.
        for part in batch:
            self._check_append(part)
        for part in batch:
            entry = self._entry(part.task_id)
            if part.owner is not None:
                self._own(part.task_id, context_of(part.events), part.owner)
            entry.events.extend(part.events)
            entry.touched = time.time()
            for stored in part.events:
                event = stored.event
                if isinstance(event, Task | TaskStatusUpdateEvent):
                    status = event.status
                    if status.state is not entry.state or status.timestamp != entry.stamp:
                        self._index.touch(
                            part.task_id,
                            event.context_id,
                            status.state,
                            status_time(status),
                            self._owners.get(part.task_id),
                        )
                    entry.state, entry.stamp = status.state, status.timestamp
            self._enqueue(part.outbox)
            if part.snapshot is not None:
                self._save(part.snapshot, part.events[-1].sequence if part.events else 0)
            if part.release and part.lease is not None:
                self._release(part.lease)

    def _check_append(self, part: Append) -> None:
        if part.lease is not None and not self._holds(part.lease):
            raise LeaseLostError(lost(part.task_id))
        events = part.events
        if not events:
            return
        last = self._last(part.task_id)
        if events[0].sequence <= last:
            raise ValueError(duplicate(part.task_id, events))

    def _last(self, task_id: str) -> int:
        entry = self._tasks.get(task_id)
        if entry is not None:
            return entry.events[-1].sequence if entry.events else 0
        packed = self._done_events.get(task_id)
        if not packed:
            return 0
        return int(packed[packed.rfind(b"\n") + 1 :].partition(b" ")[0])

    async def events(self, task_id: str, after: int = 0) -> list[StoredEvent]:
        entry = self._tasks.get(task_id)
        logged = (
            entry.events if entry is not None else _unpack_events(self._done_events.get(task_id))
        )
        return [stored for stored in logged if stored.sequence > after]

    async def last_sequence(self, task_id: str) -> int:
        return self._last(task_id)

    async def delete(self, task_id: str) -> None:
        context_id = self._index.context(task_id)
        self._index.remove(task_id)
        if context_id is not None and not self._index.has_context(context_id):
            self._context_owners.pop(context_id, None)
        self._tasks.pop(task_id, None)
        self._done.pop(task_id, None)
        self._done_events.pop(task_id, None)
        self._owners.pop(task_id, None)
        self._forget_task(task_id)
        keys = self._sent_to.pop(task_id, None)
        for key in _split(keys) if keys else ():
            self._forget(key)

    def _forget(self, key: str) -> None:
        self._sent.pop(key, None)
        self._replies.pop(key, None)
        self._claimed.pop(key, None)

    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        def load(task_id: str) -> Task | None:
            snapshot = self._load(task_id)
            return None if snapshot is None else snapshot.task

        return self._index.page(query, load)

    async def active(self) -> list[str]:
        return [task_id for task_id, entry in self._tasks.items() if entry.state in ACTIVE_STATES]

    async def find_message(self, scope: str, message_id: str) -> SentMessage | None:
        return self._sent_message(_key(scope, message_id))

    def _sent_message(self, key: str) -> SentMessage | None:
        task_id = self._sent.get(key)
        if task_id is None:
            return None
        reply = self._replies.get(key)
        return SentMessage(task_id, None if reply is None else Message.model_validate_json(reply))

    async def claim_message(self, scope: str, message_id: str, task_id: str) -> SentMessage | None:
        key = _key(scope, message_id)
        earlier = self._sent_message(key)
        if earlier is None:
            self._sent[key] = task_id
            self._sent_to[task_id] = _join(self._sent_to.get(task_id), key)
            self._claimed[key] = time.time()
        return earlier

    async def release_message(self, scope: str, message_id: str) -> None:
        self._forget(_key(scope, message_id))

    async def save_reply(self, scope: str, message_id: str, reply: Message) -> None:
        key = _key(scope, message_id)
        if key in self._sent:
            self._replies[key] = reply.to_json()

    async def expire(
        self, *, ended_before: datetime, waiting_before: datetime, limit: int | None = None
    ) -> int:
        ended, waiting = ended_before.timestamp(), waiting_before.timestamp()
        waiting_expired = (
            task_id
            for task_id, entry in self._tasks.items()
            if entry.state is not None
            and (
                (is_terminal(entry.state) and entry.touched < ended)
                or (is_interrupted(entry.state) and entry.touched < waiting)
            )
        )
        done_expired = (task_id for task_id, done in self._done.items() if _unpack(done)[3] < ended)
        expired = list(itertools.islice(itertools.chain(waiting_expired, done_expired), limit))
        for task_id in expired:
            await self.delete(task_id)
        if limit is None or len(expired) < limit:
            # Claims that never led to a stored task (direct replies, runs that died early).
            for key, at in list(self._claimed.items()):
                task_id = self._sent[key]
                if at < ended and task_id not in self._tasks and task_id not in self._done:
                    self._forget(key)
                    self._sent_to.pop(task_id, None)
        return len(expired)

    async def aclose(self) -> None:
        """Nothing to release."""

    def __len__(self) -> int:
        return len(self._done) + sum(1 for entry in self._tasks.values() if entry.snapshot)
