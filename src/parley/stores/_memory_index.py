"""The memory store's index of tasks by status time, for ``list_tasks`` (ListTasks).

Each task has one key, ``"{status time:020.6f}|{task id}"``, whose string order is the
order of ListTasks (v1.0.1 §3.1.4: status timestamp, then id; ``status_time``). Keys are
kept sorted for all tasks, per context and per state, so a page is a bisect and a walk
of ``limit`` keys, and a count a bisect per chunk:
no query reads every task.

A sorted run of keys is held as a list of tuples of at most ``CHUNK`` strings: the
garbage collector stops tracking a tuple of strings, so, as for the rest of the memory
store, what grows with the number of tasks costs a full collection nothing (a plain list
of every key would be walked each time). Inserting or removing a key rebuilds one tuple.
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import replace

from parley.stores._protocols import TaskPage, TaskQuery
from parley.types import Task, TaskState

CHUNK = 64
_STATE_VALUES = {state: state.value for state in TaskState}


def _key(touched: float, task_id: str) -> str:
    return f"{touched:020.6f}|{task_id}"


def _task_id(key: str) -> str:
    return key.partition("|")[2]


def _position(key: str) -> tuple[float, str]:
    touched, _, task_id = key.partition("|")
    return float(touched), task_id


class SortedKeys:
    """Sorted strings in chunks (tuples), ``CHUNK`` to ``2 * CHUNK`` long."""

    def __init__(self) -> None:
        self._chunks: list[tuple[str, ...]] = []
        self._maxes: list[str] = []

    def __bool__(self) -> bool:
        return bool(self._chunks)

    @classmethod
    def of(cls, keys: tuple[str, ...]) -> SortedKeys:
        """A view of one sorted tuple."""
        view = cls()
        if keys:
            view._chunks, view._maxes = [keys], [keys[-1]]
        return view

    def add(self, key: str) -> None:
        if not self._chunks:
            self._chunks.append((key,))
            self._maxes.append(key)
            return
        index = min(bisect_left(self._maxes, key), len(self._chunks) - 1)
        chunk = self._chunks[index]
        at = bisect_left(chunk, key)
        chunk = (*chunk[:at], key, *chunk[at:])
        if len(chunk) > 2 * CHUNK:
            self._chunks[index : index + 1] = [chunk[:CHUNK], chunk[CHUNK:]]
            self._maxes[index : index + 1] = [chunk[CHUNK - 1], chunk[-1]]
        else:
            self._chunks[index] = chunk
            self._maxes[index] = chunk[-1]

    def remove(self, key: str) -> None:
        index = bisect_left(self._maxes, key)
        chunk = self._chunks[index]
        at = bisect_left(chunk, key)
        chunk = chunk[:at] + chunk[at + 1 :]
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
    def __init__(self) -> None:
        self._all = SortedKeys()
        self._by_context: dict[str, tuple[str, ...]] = {}
        """context id -> its tasks' keys, sorted (contexts hold few tasks; a dict of
        tuples of strings is not tracked by the collector)."""
        self._by_state: dict[str, SortedKeys] = {}
        self._keys: dict[str, str] = {}
        """task id -> its key."""
        self._places: dict[str, str] = {}
        """task id -> ``"{state}|{context id}"``, where its key is filed."""
        self._by_owner: dict[str, SortedKeys] = {}
        self._owner_of: dict[str, str] = {}
        """task id -> its owner, for the tasks that have one."""

    def touch(
        self,
        task_id: str,
        context_id: str,
        state: TaskState,
        touched: float | None,
        owner: str | None = None,
    ) -> None:
        """File (or refile) a task under its context, state and status time (``touched``:
        ``status_time`` of its latest status; ``None``: unchanged). A task keeps the
        latest status time it was filed at (a status stamped earlier does not move it
        back), as the SQL stores do, so a cursor never meets a task twice."""
        name = _STATE_VALUES[state]
        place = f"{name}|{context_id}"
        filed_key = self._keys.get(task_id)
        if filed_key is not None:
            filed = _position(filed_key)[0]
            if touched is None or touched <= filed:
                if self._places[task_id] == place:
                    if owner is not None and task_id not in self._owner_of:  # given later
                        self._file_owner(task_id, filed_key, owner)
                    return
                touched = filed
        elif touched is None:
            touched = time.time()
        self.remove(task_id)
        key = _key(touched, task_id)
        self._keys[task_id] = key
        self._places[task_id] = place
        self._all.add(key)
        keys = self._by_context.get(context_id, ())
        at = bisect_left(keys, key)
        self._by_context[context_id] = (*keys[:at], key, *keys[at:])
        in_state = self._by_state.get(name)
        if in_state is None:
            in_state = self._by_state[name] = SortedKeys()
        in_state.add(key)
        if owner is not None:
            self._file_owner(task_id, key, owner)

    def _file_owner(self, task_id: str, key: str, owner: str) -> None:
        self._owner_of[task_id] = owner
        owned = self._by_owner.get(owner)
        if owned is None:
            owned = self._by_owner[owner] = SortedKeys()
        owned.add(key)

    def context(self, task_id: str) -> str | None:
        """The context a task is filed under (``None``: not filed)."""
        place = self._places.get(task_id)
        return None if place is None else place.partition("|")[2]

    def has_context(self, context_id: str) -> bool:
        return context_id in self._by_context

    def remove(self, task_id: str) -> None:
        key = self._keys.pop(task_id, None)
        if key is None:
            return
        state, _, context_id = self._places.pop(task_id).partition("|")
        self._all.remove(key)
        owner = self._owner_of.pop(task_id, None)
        if owner is not None:
            owned = self._by_owner[owner]
            owned.remove(key)
            if not owned:
                del self._by_owner[owner]
        in_state = self._by_state[state]
        in_state.remove(key)
        if not in_state:
            del self._by_state[state]
        in_context = self._by_context[context_id]
        at = bisect_left(in_context, key)
        if len(in_context) > 1:
            self._by_context[context_id] = in_context[:at] + in_context[at + 1 :]
        else:
            del self._by_context[context_id]

    def page(self, query: TaskQuery, load: Callable[[str], Task | None]) -> TaskPage:
        """The page ``query`` asks for; ``load`` gives a task by id."""
        keys = self._narrowest(query)
        low = "" if query.touched_after is None else _key(query.touched_after, "")
        below = None if query.after is None else _key(*query.after)
        wanted = self._checks(query)
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
            return SortedKeys.of(self._by_context.get(query.context_id, ()))
        if query.owner:
            return self._by_owner.get(query.owner, SortedKeys())
        if query.state is not None:
            return self._by_state.get(query.state.value, SortedKeys())
        return self._all

    def _tenants(self) -> list[SortedKeys]:
        """The keys of each v1.0 tenant's owners (``/{tenant}/...``)."""
        return [keys for owner, keys in self._by_owner.items() if owner.startswith("/")]

    def _checks(self, query: TaskQuery) -> Callable[[str], bool] | None:
        """The filters ``_narrowest`` did not apply, checked key by key: the state in a
        context's or an owner's keys, the owner in a context's keys (a context holds
        few tasks); for the default tenant (owner ``""``), no tenant's task."""
        if query.owner == "":
            rest = self._checks(replace(query, owner=None))
            if not self._tenants():
                return rest
            owner_of = self._owner_of

            def untenanted(key: str) -> bool:
                return not owner_of.get(_task_id(key), "").startswith("/")

            if rest is None:
                return untenanted
            return lambda key: untenanted(key) and rest(key)
        state, owner = query.state, query.owner
        if state is not None and (query.context_id is not None or owner is not None):
            prefix = f"{state.value}|"
            if query.context_id is None or owner is None:
                return lambda key: self._places[_task_id(key)].startswith(prefix)
            return lambda key: (
                self._places[_task_id(key)].startswith(prefix)
                and self._owner_of.get(_task_id(key)) == owner
            )
        if owner is not None and query.context_id is not None:
            return lambda key: self._owner_of.get(_task_id(key)) == owner
        return None
