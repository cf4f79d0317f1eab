"""The memory store's index of tasks for ``list_tasks`` (ListTasks), the plain way.

Each task is filed under its ``Place``: the status time it was last filed at, its state
and its context, and its owner. A page walks every filed task, keeps those the query
asks for, and orders them by ``key``: status time, then id, as v1.0.1 §3.1.4 orders
ListTasks (``status_time``), newest first. ``parley._speedups.memory`` gives a sorted
index in its place, which finds a page without reading every task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

from parley.stores._protocols import StoredEvent, TaskPage, TaskQuery, status_time
from parley.types import Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent


class Place(NamedTuple):
    """Where a task is filed: the time its status last changed, its state, its context."""

    filed: float
    state: TaskState
    context_id: str


class Index(Protocol):
    """What the memory store asks of its index (``TaskIndex``, or the sorted one)."""

    def add(self, task_id: str, place: Place, owner: str | None) -> None: ...
    def add_owner(self, task_id: str, place: Place, owner: str) -> None: ...
    def remove(self, task_id: str, place: Place, owner: str | None) -> None: ...
    def has_context(self, context_id: str) -> bool: ...
    def page(
        self,
        query: TaskQuery,
        load: Callable[[str], Task | None],
        filed: Callable[[str], tuple[TaskState | None, str | None]],
    ) -> TaskPage: ...


def key(filed: float, task_id: str) -> str:
    """The task's place in ListTasks' order, as a string whose order is that order: the
    time in whole microseconds from ``_SHIFT`` (so every time has twenty digits), then
    the id."""
    return f"{round(filed * 1_000_000) + _SHIFT}|{task_id}"


_SHIFT = 2 * 10**19
"""Twenty digits for any time within ~300,000 years of 1970."""


def position(key: str) -> tuple[float, str]:
    """The status time and task id of a ``key``: a page's cursor (``TaskPage.last``)."""
    micros, _, task_id = key.partition("|")
    return (int(micros) - _SHIFT) / 1_000_000, task_id


class TaskIndex:
    """Every filed task's place and owner, read whole for each page."""

    def __init__(self) -> None:
        self._filed: dict[str, tuple[Place, str | None]] = {}
        self._contexts: dict[str, int] = {}
        """context id -> how many filed tasks it holds."""

    def add(self, task_id: str, place: Place, owner: str | None) -> None:
        self._filed[task_id] = (place, owner)
        self._contexts[place.context_id] = self._contexts.get(place.context_id, 0) + 1

    def add_owner(self, task_id: str, place: Place, owner: str) -> None:
        """File a task already filed under the owner it was given since."""
        self._filed[task_id] = (place, owner)

    def remove(self, task_id: str, place: Place, owner: str | None) -> None:
        del self._filed[task_id]
        left = self._contexts[place.context_id] - 1
        if left:
            self._contexts[place.context_id] = left
        else:
            del self._contexts[place.context_id]

    def has_context(self, context_id: str) -> bool:
        return context_id in self._contexts

    def page(
        self,
        query: TaskQuery,
        load: Callable[[str], Task | None],
        filed: Callable[[str], tuple[TaskState | None, str | None]],
    ) -> TaskPage:
        """The page ``query`` asks for; ``load`` gives a task by id. (``filed``, the state
        and owner the store filed a task under, is this index's own here.)"""
        low = None if query.touched_after is None else key(query.touched_after, "")
        keys = sorted(
            (
                key(place.filed, task_id)
                for task_id, (place, owner) in self._filed.items()
                if _wanted(query, place, owner)
            ),
            reverse=True,
        )
        if low is not None:
            keys = [found for found in keys if found > low]
        total = len(keys)
        if query.after is not None:
            below = key(*query.after)
            keys = [found for found in keys if found < below]
        chosen = keys[: query.limit]
        last = position(chosen[-1]) if len(keys) > query.limit else None
        tasks = [
            task for task in (load(position(found)[1]) for found in chosen) if task is not None
        ]
        return TaskPage(tasks, total, last)


def _wanted(query: TaskQuery, place: Place, owner: str | None) -> bool:
    """Whether a task filed at ``place`` for ``owner`` is one ``query`` asks for. An owner
    of ``""`` is the default tenant's: any task no v1.0 tenant (``/{tenant}/...``) owns."""
    if query.context_id is not None and place.context_id != query.context_id:
        return False
    if query.state is not None and place.state is not query.state:
        return False
    if query.owner == "":
        return not (owner or "").startswith("/")
    return query.owner is None or owner == query.owner


_STATUS_EVENTS = (TaskStatusUpdateEvent, Task)


def moves(
    events: Sequence[StoredEvent], state: TaskState | None, stamp: str | None
) -> tuple[float, str, TaskState, str | None] | None:
    """Where the statuses among ``events`` file a task last filed at ``state`` and
    ``stamp``: the latest status time among the ones that change it, the context, state
    and timestamp of the last one; ``None`` if none changes it. Filing once at this is
    filing at each in turn (a task keeps the latest status time it was filed at)."""
    at: float | None = None
    context_id = ""
    for stored in events:
        event = stored.event
        # by exact type first: a model class's isinstance that fails walks its ABC checks
        if type(event) is Task or (
            type(event) is not TaskArtifactUpdateEvent and isinstance(event, _STATUS_EVENTS)
        ):
            status = event.status
            if status.state is not state or status.timestamp != stamp:
                when = status_time(status)
                if at is None or when > at:
                    at = when
                context_id, state, stamp = event.context_id, status.state, status.timestamp
    return None if at is None or state is None else (at, context_id, state, stamp)
