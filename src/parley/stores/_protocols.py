"""The small protocols a store implements, one per concern.

A parley store keeps, per task:

- the *task* (``TaskStore``): its snapshot (the Task as of some event sequence number),
  its state and last activity, and who owns it (the principal that created it);
- the *event log* (``EventStore``): every event with its sequence number. An event and
  the push deliveries it causes (``OutboxEntry``) are written in one transaction, and an
  append may be *fenced* by the writer's lease, so a process that lost a task cannot
  write into its log;
- the *sent messages* (``SentMessageStore``): which task each ``messageId`` went to, so
  a repeated ``message/send`` finds the first;
- its *push notification configs* (``PushConfigStore``);
- the *delivery outbox* (``OutboxStore``): push deliveries still to be made;
- its *lease* (``LeaseStore``): which process works on it, until when.

Everything of a task goes when the task goes (``TaskStore.delete``, retention).

``Store`` is all of them together: a backend implements every concern, because what
must happen together (an event and its outbox rows, an append and its lease check) is
one transaction of one database. Code that needs one concern asks for that protocol.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from parley._speedups import encode_chunk, encode_task, made_time
from parley.types import (
    Event,
    Message,
    PushNotificationConfig,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)


@dataclass(slots=True)
class StoredEvent:
    """One entry of a task's event log. Never changed once logged (only ``wire`` is
    filled in), yet not frozen: a frozen dataclass sets each field through
    ``object.__setattr__``, which made one cost twice as much (three per send)."""

    sequence: int
    """Position in the task's log: 1, 2, 3, ... with no gaps."""
    event: Event
    wire: bytes | None = field(default=None, compare=False, repr=False)
    """The event's wire JSON, once made or read back (see ``to_json``)."""

    def to_json(self) -> bytes:
        """The event's wire JSON, made once: the store that writes the event and every
        stream that sends it share it (a published event is never changed)."""
        wire = self.wire
        if wire is None:
            event = self.event
            if type(event) is Task:
                wire = encode_task(event, "0.3")
            elif type(event) is TaskArtifactUpdateEvent:
                wire = encode_chunk(event)
            if wire is None:
                wire = event.to_json()
            self.wire = wire
        return wire


@dataclass(frozen=True, slots=True)
class TaskSnapshot:
    """A task as stored, with the sequence number of the last event folded into it."""

    task: Task
    sequence: int
    owner: str | None = None
    """The principal the task belongs to (``None``: no one in particular)."""


@dataclass(frozen=True, slots=True)
class SentMessage:
    """What a message sent earlier (same ``messageId``, same task or context) led to."""

    task_id: str
    """The task the message started or continued."""
    reply: Message | None = None
    """The agent's direct reply, when it answered with a Message instead of a task."""


@dataclass(frozen=True, slots=True)
class Lease:
    """A process's claim on a task: it alone runs the agent and appends events."""

    task_id: str
    holder: str
    """Who holds it: one id per server process."""
    token: int
    """Fencing token: grows by one each time the task changes hands."""
    expires: float
    """Epoch seconds; after this another process may take the task over."""
    last_sequence: int | None = field(default=None, compare=False)
    """The task's last stored sequence number as the lease was taken (no other process
    can append after that while the lease holds), when the store read it in the same
    transaction; ``None``: not known. The new holder reads the store only if its copy
    of the task is behind."""
    new: bool = field(default=False, compare=False)
    """Not stored yet: made by its holder for a task it has just created (token 1), and
    stored by the task's first ``append`` that carries it, in the same transaction,
    which refuses it (``LeaseLostError``) if the task has a lease already. Saves a new
    task's run a transaction of its own. Only stores that are ``shared`` take one.
    If that append also gives the lease up (``release``: the run ends with its first
    write), the store need not keep it (SQL stores do not: no row, so the task's next
    holder gets token 1 again). That is safe: the lease fenced nothing, no other
    process could know the task before that append, and its holder writes nothing
    under it after."""


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """A push delivery an event causes, written with the event, removed once delivered."""

    task_id: str
    config_id: str
    """The push config it goes to."""
    sequence: int
    """The event it delivers."""
    payload: str
    """What to post (wire JSON)."""
    id: int = 0
    """Given by the store when the entry is written."""
    attempts: int = 0
    due: float = 0.0
    """Epoch seconds: not before this."""
    created: float = 0.0
    """Epoch seconds the entry was written (set by the store): delivery gives up a
    deadline after it."""
    traceparent: str | None = None
    """The W3C ``traceparent`` of the run that produced it, when it was traced: the
    notification carries it, whichever process delivers it."""


@dataclass(frozen=True, slots=True)
class Append:
    """One task's share of a write: events, the outbox rows they cause, the writer's lease."""

    task_id: str
    events: Sequence[StoredEvent]
    outbox: Sequence[OutboxEntry] = ()
    lease: Lease | None = None
    """When given, the write happens only if this lease still holds the task."""
    snapshot: Task | None = None
    """When given, saved as the task's snapshot (as of the last of ``events``), in the
    same transaction: a checkpoint costs no second write."""
    release: bool = False
    """Give ``lease`` up in the same transaction (the run's interaction ended)."""
    owner: str | None = None
    """When given, recorded as the task's owner unless it has one already: a task's
    owner is stored with its first event."""


@dataclass(frozen=True, slots=True)
class TaskQuery:
    """Which tasks ``list_tasks`` returns: the filters and the page (ListTasks)."""

    context_id: str | None = None
    state: TaskState | None = None
    touched_after: float | None = None
    """Only tasks whose status time (``status_time``, epoch seconds) is this or later."""
    after: tuple[float, str] | None = None
    """The page starts after this ``(status time, task id)`` position of the order."""
    limit: int = 50
    owner: str | None = None
    """Only the tasks of this owner (``None``: every task; ``""``: the default tenant's,
    every task whose owner, if any, does not start with ``/``: no v1.0 tenant's)."""


@dataclass(frozen=True, slots=True)
class TaskPage:
    """One page of tasks, the latest status time first (ties: the larger id first)."""

    tasks: list[Task]
    total: int
    """How many tasks match the filters over all pages."""
    last: tuple[float, str] | None
    """The position of the page's last task, when more tasks follow; else ``None``."""


class LeaseLostError(RuntimeError):
    """An append was fenced: the writer's lease no longer holds the task."""


class StoreInUseError(RuntimeError):
    """The store serves one process, and another process is serving it."""


class TaskStore(Protocol):
    """Tasks: their snapshots, states, owners and retention."""

    async def get(self, task_id: str) -> TaskSnapshot | None:
        """The task as of its last stored event (its snapshot with the events logged
        after the snapshot folded in), or ``None`` if the store has no such task."""
        ...

    async def save(self, task: Task, sequence: int, *, owner: str | None = None) -> None:
        """Save ``task`` as its snapshot, current as of event ``sequence``. ``owner``,
        when given, is recorded (an owner once recorded is kept when later saves give
        none)."""
        ...

    async def context_owner(self, context_id: str) -> str | None:
        """The owner recorded for a task of ``context_id`` (the context's owner: the
        principal who started it), or ``None`` when no stored task of it has one."""
        ...

    async def delete(self, task_id: str) -> None:
        """Forget a task with everything of it: events, sent messages, push configs,
        outbox entries, lease (no error if it is unknown)."""
        ...

    async def active(self) -> list[str]:
        """Ids of the tasks whose last stored state is ``submitted`` or ``working``: the
        tasks an agent was running on, as far as the store knows."""
        ...

    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        """The tasks matching ``query``, ordered by last activity (latest first), one page;
        served from an index, never by reading every task."""
        ...

    async def expire(
        self, *, ended_before: datetime, waiting_before: datetime, limit: int | None = None
    ) -> int:
        """Delete tasks (as ``delete`` does) in a terminal state with no activity since
        ``ended_before``, and in an interrupted state with no activity since
        ``waiting_before``; returns how many were deleted. At most ``limit`` tasks (all
        when ``None``), in one short transaction: retention calls it again, after a
        pause, while it returns ``limit``. Direct replies recorded before
        ``ended_before`` go too (with a ``limit``: in the call that finds fewer tasks)."""
        ...


class EventStore(Protocol):
    """Event logs, and the one write path of a task's progress.

    Every write is an ``append_many`` of ``Append`` batches in **one transaction**: the
    events of each batch, the outbox entries they cause, the check of the writer's
    lease. A writer that gathers the appends of many tasks (group commit) passes them
    all in one call; the store rejects the whole call if any part fails.
    """

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
        """``append_many`` of one ``Append``."""
        ...

    async def append_many(self, batch: Sequence[Append]) -> None:
        """Append each batch's events to its task's log, in order, write its outbox
        entries, save its snapshot and give its lease up when asked, all in one
        transaction; the task's state and last activity follow.

        Raises ``ValueError`` (and stores nothing) if a sequence number is already in a
        log: a logged event is never overwritten. Raises ``LeaseLostError`` (and stores
        nothing) if a batch's ``lease`` no longer holds its task."""
        ...

    async def events(self, task_id: str, after: int = 0) -> list[StoredEvent]:
        """The logged events of a task with a sequence number above ``after``, in order.
        Logs are kept as long as their task, whatever its state."""
        ...

    async def last_sequence(self, task_id: str) -> int:
        """The sequence number of the newest event of a task (0 if it has none)."""
        ...


class SentMessageStore(Protocol):
    """Which task each message went to, for idempotent send."""

    async def find_message(self, scope: str, message_id: str) -> SentMessage | None:
        """What message ``message_id`` sent in ``scope`` (a task or context id) led to,
        or ``None`` if it was never sent there."""
        ...

    async def claim_message(self, scope: str, message_id: str, task_id: str) -> SentMessage | None:
        """Record that message ``message_id`` in ``scope`` goes to ``task_id``, atomically:
        returns ``None`` when this call recorded it, or what the earlier send recorded."""
        ...

    async def release_message(self, scope: str, message_id: str) -> None:
        """Forget a claim whose message was refused, so the client may send it again."""
        ...

    async def save_reply(self, scope: str, message_id: str, reply: Message) -> None:
        """Record the agent's direct reply to a claimed message."""
        ...


class PushConfigStore(Protocol):
    """Push notification configs of each task, by config id."""

    async def set_push_config(
        self, task_id: str, config: PushNotificationConfig, version: str = "0.3"
    ) -> None:
        """Add or replace the config with ``config.id`` (the task's id when it has none).
        ``version`` is the A2A version the client set it in (``0.3``, ``1.0``): the shape
        its notifications are posted in."""
        ...

    async def get_push_config(
        self, task_id: str, config_id: str
    ) -> PushNotificationConfig | None: ...

    async def list_push_configs(self, task_id: str) -> list[PushNotificationConfig]:
        """The task's configs, in the order they were first set."""
        ...

    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        """Remove one config; whether there was one."""
        ...

    async def push_config_versions(self, task_id: str) -> dict[str, str]:
        """The task's config ids, in the order they were first set, with the A2A
        version each was set in: what a notification of the task is posted to."""
        ...


class OutboxStore(Protocol):
    """Push deliveries still to be made (written by ``EventStore.append``)."""

    async def outbox_due(self, now: float, limit: int = 100) -> list[OutboxEntry]:
        """Entries due at ``now``, oldest first (by task, then sequence)."""
        ...

    async def outbox_claim(
        self, holder: str, now: float, lease: float, limit: int
    ) -> list[OutboxEntry]:
        """Claim up to ``limit`` entries for ``holder`` until ``now + lease``: entries due
        at ``now`` that no live claim holds and that come first in their *lane* (no
        entry of the same task and config with a lower id is still in the outbox), so
        one lane is delivered in order, by one claimer at a time. Atomic: two claimers
        (processes) never get the same entry while its claim lives."""
        ...

    async def outbox_done(self, entry_id: int) -> None:
        """Remove a delivered (or given up) entry."""
        ...

    async def outbox_retry(self, entry_id: int, due: float) -> None:
        """Count one more attempt and try again at ``due`` (the claim is released)."""
        ...


class LeaseStore(Protocol):
    """Which process works on which task, with an expiry the holder keeps pushing back.

    Times are epoch seconds of the caller's clock: processes sharing a database need
    clocks in step to well under the lease time.
    """

    async def acquire_lease(self, task_id: str, holder: str, ttl: float) -> Lease | None:
        """Take the task for ``holder`` for ``ttl`` seconds: a new lease (a larger token)
        when no lease holds it or the one that did has expired, the same lease renewed
        when ``holder`` already holds it, ``None`` when another live lease does. A
        store may fill in the lease's ``last_sequence``."""
        ...

    async def renew_leases(self, holder: str, ttl: float) -> set[str]:
        """Push back the expiry of every lease ``holder`` holds that has not expired
        (the heartbeat); returns the task ids it still holds."""
        ...

    async def release_lease(self, lease: Lease) -> None:
        """Give the task up (no error if the lease was lost already)."""
        ...

    async def get_lease(self, task_id: str) -> Lease | None:
        """The task's lease, expired or not; ``None`` if it has none."""
        ...


class Store(
    TaskStore, EventStore, SentMessageStore, PushConfigStore, OutboxStore, LeaseStore, Protocol
):
    """Every concern of one backend together: what a server is built with.

    Implementations must be safe to call concurrently from one event loop."""

    @property
    def shared(self) -> bool:
        """Whether several server processes may use the store at once (PostgreSQL): the
        server then takes a lease on each task it runs, and tells the others of events."""
        ...

    async def aclose(self) -> None:
        """Release connections (no-op for stores that hold none)."""
        ...


def duplicate(task_id: str, events: Sequence[StoredEvent]) -> str:
    """The message of the ``ValueError`` for events whose sequence is already logged."""
    numbers = ", ".join(str(stored.sequence) for stored in events)
    return f"task {task_id} already has an event numbered {numbers} in its log"


def lost(task_id: str) -> str:
    """The message of ``LeaseLostError``."""
    return f"this process no longer holds task {task_id}: another one took it over"


def context_of(logged: Sequence[StoredEvent]) -> str | None:
    """The context of the events (a task and its events share one)."""
    for stored in logged:
        context_id = getattr(stored.event, "context_id", None)
        if context_id:
            return str(context_id)
    return None


def status_time(status: TaskStatus) -> float:
    """When ``status`` was set, epoch seconds: its ``timestamp`` (UTC when it names no
    zone), or now when it has none. ListTasks orders tasks by it, latest first (v1.0.1
    §3.1.4); every store keeps a task at the latest status time it has seen."""
    stamp = status.timestamp
    if stamp:
        known = made_time(stamp)  # a timestamp parley made: not parsed
        if known is not None:
            return known
        try:
            when = datetime.fromisoformat(stamp)
        except ValueError:
            return time.time()
        return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
    return time.time()
