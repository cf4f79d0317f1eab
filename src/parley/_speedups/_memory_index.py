"""The memory store's index of tasks by status time, for ``list_tasks`` (ListTasks), sorted:
the fast counterpart of ``parley.stores._memory_index.TaskIndex``, which reads every task
for each page.

Each task has one key, its status time in microseconds and its id (``key``), whose
string order is the order of ListTasks (v1.0.1 §3.1.4: status timestamp, then id;
``status_time``). Keys are kept sorted for all tasks, per context and per state, so a
page is a bisect and a walk of ``limit`` keys, and a count a bisect per chunk: no query
reads every task.

A sorted run of keys is held as a list of tuples of at most ``2 * CHUNK`` strings:
the garbage collector stops tracking a tuple of strings, so, as for the rest of the
memory store, what grows with the number of tasks costs a full collection nothing (a
plain list of every key would be walked each time). Inserting or removing a key rebuilds
one tuple, but for the last chunk, which is a list: new keys mostly go last (status
times mostly grow), and appending to a list in place spares copying up to ``2 * CHUNK``
keys for each (two a send); the collector walks that one short list only.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import replace

from parley.stores._memory_index import Place
from parley.stores._memory_index import key as _key
from parley.stores._memory_index import position as _position
from parley.stores._protocols import TaskPage, TaskQuery
from parley.types import Task, TaskState

CHUNK = 64
_STATE_VALUES = {state: state.value for state in TaskState}


def _task_id(key: str) -> str:
    return key.partition("|")[2]


class SortedKeys:
    """Sorted strings in chunks, ``CHUNK`` to ``2 * CHUNK`` long: tuples, but the last,
    a list (see the module docs)."""

    def __init__(self) -> None:
        self._chunks: list[tuple[str, ...] | list[str]] = []
        self._maxes: list[str] = []

    def __bool__(self) -> bool:
        return bool(self._chunks)

    @classmethod
    def of(cls, keys: tuple[str, ...]) -> SortedKeys:
        """A view of one sorted tuple, for reading."""
        view = cls()
        if keys:
            view._chunks, view._maxes = [keys], [keys[-1]]
        return view

    def add(self, key: str) -> None:
        maxes = self._maxes
        if not maxes:
            self._chunks.append([key])
            maxes.append(key)
            return
        if key > maxes[-1]:  # the usual case: status times mostly grow
            index = len(maxes) - 1
            last = self._chunks[index]
            if type(last) is list:
                last.append(key)
                if len(last) <= 2 * CHUNK:
                    maxes[index] = key
                    return
                chunk: tuple[str, ...] | list[str] = last
            else:  # the last chunk was removed: the one before is a tuple
                chunk = [*last, key]
        else:
            index = bisect_left(maxes, key)
            chunk = self._chunks[index]
            at = bisect_left(chunk, key)
            if type(chunk) is list:
                chunk.insert(at, key)
            else:
                chunk = (*chunk[:at], key, *chunk[at:])
        if len(chunk) > 2 * CHUNK:
            rest = chunk[CHUNK:]  # a list if it is the last chunk's
            self._chunks[index : index + 1] = [tuple(chunk[:CHUNK]), rest]
            self._maxes[index : index + 1] = [chunk[CHUNK - 1], chunk[-1]]
        else:
            self._chunks[index] = chunk
            self._maxes[index] = chunk[-1]

    def remove(self, key: str) -> None:
        index = bisect_left(self._maxes, key)
        chunk = self._chunks[index]
        at = bisect_left(chunk, key)
        if type(chunk) is list:
            del chunk[at]
        else:
            chunk = (*chunk[:at], *chunk[at + 1 :])
        if chunk:
            self._chunks[index] = chunk
            self._maxes[index] = chunk[-1]
        else:
            del self._chunks[index], self._maxes[index]

    def count_above(self, low: str) -> int:
        """How many keys are greater than ``low``."""
        index = bisect_right(self._maxes, low)
        if index == len(self._chunks):
            return 0
        first = self._chunks[index]
        rest = sum(len(chunk) for chunk in self._chunks[index + 1 :])
        return len(first) - bisect_right(first, low) + rest

    def descending(self, below: str | None, low: str) -> Iterator[str]:
        """Keys under ``below`` (all if ``None``) and above ``low``, largest first."""
        index = len(self._chunks) - 1 if below is None else bisect_left(self._maxes, below)
        index = min(index, len(self._chunks) - 1)
        while index >= 0:
            chunk = self._chunks[index]
            end = len(chunk) if below is None else bisect_left(chunk, below)
            for key in reversed(chunk[:end]):
                if key <= low:
                    return
                yield key
            index -= 1


class TaskIndex:
    """Every task's key, sorted: all of them, and by context, state and owner.

    Nothing else is kept per task: the store keeps each task's ``Place`` (and owner) and
    gives it back to move or remove the task, and ``page`` asks it for the state and
    owner of the keys it filters.
    """

    def __init__(self) -> None:
        self._all = SortedKeys()
        self._by_context: dict[str, str | tuple[str, ...]] = {}
        """context id -> its task's key, or its tasks' keys sorted (a context holds few
        tasks, most of them one; strings and tuples of strings cost the collector
        nothing)."""
        self._by_state: dict[str, SortedKeys] = {}
        self._by_owner: dict[str, SortedKeys] = {}

    def add(self, task_id: str, place: Place, owner: str | None) -> None:
        key = _key(place.filed, task_id)
        self._all.add(key)
        keys = self._by_context.get(place.context_id)
        if keys is None:
            self._by_context[place.context_id] = key
        else:
            keys = (keys,) if isinstance(keys, str) else keys
            at = bisect_left(keys, key)
            self._by_context[place.context_id] = (*keys[:at], key, *keys[at:])
        name = _STATE_VALUES[place.state]
        in_state = self._by_state.get(name)
        if in_state is None:
            in_state = self._by_state[name] = SortedKeys()
        in_state.add(key)
        if owner is not None:
            self.add_owner(task_id, place, owner)

    def add_owner(self, task_id: str, place: Place, owner: str) -> None:
        """File a task already filed under the owner it was given since."""
        owned = self._by_owner.get(owner)
        if owned is None:
            owned = self._by_owner[owner] = SortedKeys()
        owned.add(_key(place.filed, task_id))

    def has_context(self, context_id: str) -> bool:
        return context_id in self._by_context

    def remove(self, task_id: str, place: Place, owner: str | None) -> None:
        key = _key(place.filed, task_id)
        self._all.remove(key)
        if owner is not None:
            owned = self._by_owner[owner]
            owned.remove(key)
            if not owned:
                del self._by_owner[owner]
        name = _STATE_VALUES[place.state]
        in_state = self._by_state[name]
        in_state.remove(key)
        if not in_state:
            del self._by_state[name]
        in_context = self._by_context[place.context_id]
        if isinstance(in_context, str) or len(in_context) == 1:
            del self._by_context[place.context_id]
            return
        at = bisect_left(in_context, key)
        rest = in_context[:at] + in_context[at + 1 :]
        self._by_context[place.context_id] = rest[0] if len(rest) == 1 else rest

    def page(
        self,
        query: TaskQuery,
        load: Callable[[str], Task | None],
        filed: Callable[[str], tuple[TaskState | None, str | None]],
    ) -> TaskPage:
        """The page ``query`` asks for; ``load`` gives a task by id, ``filed`` the state
        and owner it is filed under."""
        keys = self._narrowest(query)
        low = "" if query.touched_after is None else _key(query.touched_after, "")
        below = None if query.after is None else _key(*query.after)
        wanted = _checks(query, filed, bool(self._tenants()))
        if wanted is None:
            total = keys.count_above(low)
            walk = keys.descending(below, low)
        elif query.owner == "" and query.context_id is None and query.state is None:
            # the default tenant's: all tasks less the tenants', a bisect per chunk
            total = keys.count_above(low) - sum(t.count_above(low) for t in self._tenants())
            walk = (key for key in keys.descending(below, low) if wanted(key))
        else:
            total = sum(1 for key in keys.descending(None, low) if wanted(key))
            walk = (key for key in keys.descending(below, low) if wanted(key))
        chosen: list[str] = []
        for key in walk:
            if len(chosen) == query.limit:
                last = _position(chosen[-1])
                break
            chosen.append(key)
        else:
            last = None
        tasks = [task for task in (load(_task_id(key)) for key in chosen) if task is not None]
        return TaskPage(tasks, total, last)

    def _narrowest(self, query: TaskQuery) -> SortedKeys:
        if query.context_id is not None:
            keys = self._by_context.get(query.context_id, ())
            return SortedKeys.of((keys,) if isinstance(keys, str) else keys)
        if query.owner:
            return self._by_owner.get(query.owner, SortedKeys())
        if query.state is not None:
            return self._by_state.get(query.state.value, SortedKeys())
        return self._all

    def _tenants(self) -> list[SortedKeys]:
        """The keys of each v1.0 tenant's owners (``/{tenant}/...``)."""
        return [keys for owner, keys in self._by_owner.items() if owner.startswith("/")]


def _checks(
    query: TaskQuery,
    filed: Callable[[str], tuple[TaskState | None, str | None]],
    tenants: bool,
) -> Callable[[str], bool] | None:
    """The filters ``_narrowest`` did not apply, checked key by key: the state in a
    context's or an owner's keys, the owner in a context's keys (a context holds few
    tasks); for the default tenant (owner ``""``), no tenant's task (``tenants``: some
    task has a tenant)."""
    if query.owner == "":
        rest = _checks(replace(query, owner=None), filed, tenants)
        if not tenants:
            return rest

        def untenanted(key: str) -> bool:
            return not (filed(_task_id(key))[1] or "").startswith("/")

        if rest is None:
            return untenanted
        return lambda key: untenanted(key) and rest(key)
    state, owner = query.state, query.owner
    if state is not None and (query.context_id is not None or owner is not None):
        if query.context_id is None or owner is None:
            return lambda key: filed(_task_id(key))[0] is state
        return lambda key: filed(_task_id(key)) == (state, owner)
    if owner is not None and query.context_id is not None:
        return lambda key: filed(_task_id(key))[1] == owner
    return None
