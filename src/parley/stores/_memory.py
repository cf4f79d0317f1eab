"""The in-memory task store: the library default, and what tests and benchmarks use.

Theory of operation
-------------------
A task in progress is an ``_Entry``: its last snapshot (wire JSON), the events logged
after it, and where it is filed for ListTasks (``Place``, in ``_index``). A task that
reaches a terminal state holds still: it becomes a record in ``_done`` (its snapshot,
its event log, kept as long as the task as the SQL stores keep it, and its place), and
an entry again only if a later write reopens it. Sent messages (idempotent send) are
keyed by one string made of their scope and message id.

A busy server stores tasks much faster than it forgets them, and CPython's collector
walks every container it tracks on each full collection. So what accumulates is kept
in dicts of strings and bytes, which the collector does not track: a sent message maps
to its task's id, a direct reply is its wire JSON, the keys of the messages sent to one
task are one string; and ``parley._speedups.memory`` packs each finished task into one
``bytes`` and gives a sorted index that finds a page without reading every task. With
those declined (``PARLEY_SPEEDUPS=0``) a finished task is kept as its snapshot's JSON
and its event objects, and the index (``TaskIndex``) reads every task for a page: the
same answers, more for the collector.

What is not the store itself lives beside it: the records of finished tasks
(``_memory_finished``), the index for ListTasks and where statuses file a task
(``_memory_index``), the sent messages of idempotent sends (``_memory_sent``), and push
configs, the delivery outbox and leases (``_memory_side``).
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from parley._speedups import encode_task
from parley._speedups.memory import finish, sorted_index
from parley.protocol import ACTIVE_STATES, TERMINAL_STATES, is_interrupted, is_terminal
from parley.stores._memory_finished import Record, read_header, read_log, read_snapshot, record_of
from parley.stores._memory_index import Index, Place, TaskIndex, moves
from parley.stores._memory_sent import SentMessages
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
from parley.types import Message, Task, TaskState


@dataclass(slots=True)
class _Entry:
    """A task in progress."""

    snapshot: bytes | None = None
    sequence: int = 0
    events: list[StoredEvent] = field(default_factory=list)
    state: TaskState | None = None
    touched: float = field(default_factory=time.time)
    place: Place | None = None
    """Where it is filed in the index (``None``: not yet)."""
    stamp: str | None = None
    """The timestamp of the status the index last filed it at."""


class MemoryStore(MemorySide):
    """Tasks kept in this process, gone when it exits: every store protocol.

    Snapshots are kept as their wire JSON rather than as model objects: a small task is a
    few hundred bytes that way instead of several kilobytes of Python objects, and every
    ``get`` hands out a fresh copy that no one else can change. Once a task's terminal
    snapshot is saved it is packed with its event log into one ``bytes``, kept as long
    as the task.
    """

    shared = False

    def __init__(self) -> None:
        super().__init__()
        self._owners: dict[str, str] = {}
        """task id -> its owner (interned: a principal owns many tasks)."""
        self._context_owners: dict[str, str] = {}
        """context id -> its owner (the first owner recorded for a task of it)."""
        self._tasks: dict[str, _Entry] = {}
        self._done: dict[str, Record] = {}
        """task id -> the record of a finished task (``record_of``)."""
        self._messages = SentMessages()
        self._index: Index = sorted_index() or TaskIndex()
        """Tasks by last activity, for ``list_tasks``."""

    async def get(self, task_id: str) -> TaskSnapshot | None:
        return self._load(task_id)

    def _load(self, task_id: str) -> TaskSnapshot | None:
        record = self._done.get(task_id)
        if record is not None:
            task, sequence = read_snapshot(task_id, record)
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
        if owner is None:
            return
        owner = sys.intern(owner)
        if task_id not in self._owners:
            self._owners[task_id] = owner
            place = self._place(task_id)
            if place is not None:  # filed before it had an owner
                self._index.add_owner(task_id, place, owner)
        if context_id:
            self._context_owners.setdefault(context_id, owner)

    def _place(self, task_id: str) -> Place | None:
        entry = self._tasks.get(task_id)
        if entry is not None:
            return entry.place
        record = self._done.get(task_id)
        return None if record is None else read_header(record)[3]

    def _file(
        self, task_id: str, entry: _Entry, context_id: str, state: TaskState, at: float | None
    ) -> None:
        """File (or refile) a task under its context, state and status time (``at``:
        ``status_time`` of its latest status; ``None``: unchanged). A task keeps the
        latest status time it was filed at (a status stamped earlier does not move it
        back), as the SQL stores do, so a cursor never meets a task twice."""
        place = entry.place
        if place is not None:
            if at is None or at <= place.filed:
                if place.state is state and place.context_id == context_id:
                    return
                at = place.filed
        elif at is None:
            at = time.time()
        owner = self._owners.get(task_id)
        if place is not None:
            self._index.remove(task_id, place, owner)
        entry.place = Place(at, state, context_id)
        self._index.add(task_id, entry.place, owner)

    def _save(self, task: Task, sequence: int, owner: str | None = None) -> None:
        self._own(task.id, task.context_id, owner)
        state, stamp = task.status.state, task.status.timestamp
        known = self._tasks.get(task.id)
        moved = known is None or known.stamp != stamp or known.state is not state
        entry = self._entry(task.id)
        entry.touched = time.time()
        entry.state, entry.stamp = state, stamp
        self._file(
            task.id, entry, task.context_id, state, status_time(task.status) if moved else None
        )
        if is_terminal(state):
            del self._tasks[task.id]
            filed = entry.place.filed if entry.place is not None else entry.touched
            self._done[task.id] = record_of(task, sequence, entry.events, entry.touched, filed)
            return
        entry.snapshot, entry.sequence = encode_task(task, "0.3") or task.to_json(), sequence

    def _entry(self, task_id: str) -> _Entry:
        entry = self._tasks.get(task_id)
        if entry is not None:
            return entry
        record = self._done.pop(task_id, None)
        if record is None:
            entry = _Entry()
        else:
            json, sequence, events = read_log(task_id, record)
            _, _, touched, place = read_header(record)
            stamp = Task.model_validate_json(json).status.timestamp
            entry = _Entry(json, sequence, events, place.state, touched, place, stamp)
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
        # No Append built: this is every send's write.
        self._check_append(task_id, events, lease)
        self._append(task_id, events, outbox, lease, snapshot, release, owner)

    async def append_many(self, batch: Sequence[Append]) -> None:
        # Every check first, then every change: all or nothing, with no await between.
        # A task may have several parts: each must follow the one before.
        last: dict[str, int] = {}
        for part in batch:
            self._check_append(part.task_id, part.events, part.lease, last.get(part.task_id))
            if part.events:
                last[part.task_id] = part.events[-1].sequence
        for part in batch:
            self._append(
                part.task_id,
                part.events,
                part.outbox,
                part.lease,
                part.snapshot,
                part.release,
                part.owner,
            )

    def _append(
        self,
        task_id: str,
        events: Sequence[StoredEvent],
        outbox: Sequence[OutboxEntry],
        lease: Lease | None,
        snapshot: Task | None,
        release: bool,
        owner: str | None,
    ) -> None:
        if owner is not None:
            self._own(task_id, context_of(events), owner)
        entry = self._tasks.get(task_id)
        if (
            entry is not None
            or snapshot is None
            or not self._kept_at_once(task_id, events, snapshot)
        ):
            entry = entry or self._entry(task_id)
            entry.events.extend(events)
            entry.touched = time.time()
            moved = moves(events, entry.state, entry.stamp)
            if moved is not None:
                at, context_id, entry.state, entry.stamp = moved
                self._file(task_id, entry, context_id, entry.state, at)
            if snapshot is not None:
                self._save(snapshot, events[-1].sequence if events else 0)
        if outbox:
            self._enqueue(outbox)
        if release and lease is not None:
            self._release(lease)

    def _kept_at_once(self, task_id: str, events: Sequence[StoredEvent], task: Task) -> bool:
        """Keep ``task``, begun and finished in this append, as ``finish`` packs it at
        once; ``False``: it is not such a task, or the seam declined."""
        if task.status.state not in TERMINAL_STATES or task_id in self._done:
            return False
        done = finish(task, events, time.time())
        if done is None:
            return False
        record, filed = done
        place = Place(filed, task.status.state, task.context_id)
        self._index.add(task_id, place, self._owners.get(task_id))
        self._done[task_id] = record
        return True

    def _check_append(
        self,
        task_id: str,
        events: Sequence[StoredEvent],
        lease: Lease | None,
        last: int | None = None,
    ) -> None:
        """Refuse an append under a lost lease, or one that does not follow the task's
        ``last`` sequence number (the stored one when ``None``)."""
        if lease is not None and not self._holds(lease):
            raise LeaseLostError(lost(task_id))
        if events and events[0].sequence <= (self._last(task_id) if last is None else last):
            raise ValueError(duplicate(task_id, events))

    def _last(self, task_id: str) -> int:
        entry = self._tasks.get(task_id)
        if entry is not None:
            return entry.events[-1].sequence if entry.events else 0
        record = self._done.get(task_id)
        return 0 if record is None else read_header(record)[1]

    async def events(self, task_id: str, after: int = 0) -> list[StoredEvent]:
        entry = self._tasks.get(task_id)
        if entry is not None:
            logged = entry.events
        else:
            record = self._done.get(task_id)
            logged = [] if record is None else read_log(task_id, record)[2]
        return [stored for stored in logged if stored.sequence > after]

    async def last_sequence(self, task_id: str) -> int:
        return self._last(task_id)

    async def delete(self, task_id: str) -> None:
        place = self._place(task_id)
        owner = self._owners.pop(task_id, None)
        if place is not None:
            self._index.remove(task_id, place, owner)
            if not self._index.has_context(place.context_id):
                self._context_owners.pop(place.context_id, None)
        self._tasks.pop(task_id, None)
        self._done.pop(task_id, None)
        self._forget_task(task_id)
        self._messages.forget_task(task_id)

    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        def load(task_id: str) -> Task | None:
            snapshot = self._load(task_id)
            return None if snapshot is None else snapshot.task

        def filed(task_id: str) -> tuple[TaskState | None, str | None]:
            place = self._place(task_id)
            return None if place is None else place.state, self._owners.get(task_id)

        return self._index.page(query, load, filed)

    async def active(self) -> list[str]:
        return [task_id for task_id, entry in self._tasks.items() if entry.state in ACTIVE_STATES]

    async def find_message(self, scope: str, message_id: str) -> SentMessage | None:
        return self._messages.find(scope, message_id)

    async def claim_message(self, scope: str, message_id: str, task_id: str) -> SentMessage | None:
        return self._messages.claim(scope, message_id, task_id)

    async def release_message(self, scope: str, message_id: str) -> None:
        self._messages.release(scope, message_id)

    async def save_reply(self, scope: str, message_id: str, reply: Message) -> None:
        self._messages.save_reply(scope, message_id, reply)

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
        done_expired = (
            task_id for task_id, done in self._done.items() if read_header(done)[2] < ended
        )
        expired = list(itertools.islice(itertools.chain(waiting_expired, done_expired), limit))
        for task_id in expired:
            await self.delete(task_id)
        if limit is None or len(expired) < limit:
            self._messages.expire(ended, self._holds_task)
        return len(expired)

    def _holds_task(self, task_id: str) -> bool:
        return task_id in self._tasks or task_id in self._done

    async def aclose(self) -> None:
        """Nothing to release."""

    def __len__(self) -> int:
        return len(self._done) + sum(1 for entry in self._tasks.values() if entry.snapshot)
