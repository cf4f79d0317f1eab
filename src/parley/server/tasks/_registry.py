"""The live tasks of this process, by id, and who holds each.

A live task stays in the registry while anything *holds* it (a run, a call, a
resubscriber), and leaves when the last holder lets go, so no entry outlives its use.
Holding happens only through ``hold`` (a context manager: the hold is let go on every
path out of it) and the run's own hold, given when the run starts and let go when it
ends (``TaskRuns.start``, ``run_turn``). Only the lifecycle owner (``TaskRuns``) and the
modules it is made of use this registry.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

from parley.protocol import is_terminal
from parley.server.tasks._events import EventLog
from parley.server.tasks._live import LiveTask
from parley.stores import Store


class Registry:
    """The live tasks of this process and their holds."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._live: dict[str, LiveTask] = {}
        self._drops = 0
        """How many live tasks left the registry: ``_attach`` reads again if one did
        while it read the store."""

    def get(self, task_id: str) -> LiveTask | None:
        """The live task for ``task_id`` here, not held (``None``: none)."""
        return self._live.get(task_id)

    def __contains__(self, task_id: str) -> bool:
        return task_id in self._live

    def __iter__(self) -> Iterator[LiveTask]:
        """Every live task, as a list taken now (the registry may change meanwhile)."""
        return iter(list(self._live.values()))

    def __len__(self) -> int:
        return len(self._live)

    @asynccontextmanager
    async def hold(self, task_id: str) -> AsyncIterator[LiveTask | None]:
        """The live task for ``task_id`` (brought back from the store if needed), held
        for the block; ``None``: there is no such task."""
        live = await self._attach(task_id)
        try:
            yield live
        finally:
            if live is not None:
                self.let_go(live)

    async def _attach(self, task_id: str) -> LiveTask | None:
        while True:
            live = self._live.get(task_id)
            if live is not None:
                break
            drops = self._drops
            snapshot = await self.store.get(task_id)
            if snapshot is None:
                return None
            live = self._live.get(task_id)  # another call may have attached it meanwhile
            if live is not None:
                break
            if self._drops != drops:
                continue  # a live task left meanwhile: what was read may predate its end
            task = snapshot.task
            log = EventLog(snapshot.sequence)
            live = LiveTask(task.id, task.context_id, task, log, snapshot.owner)
            self._live[task_id] = live
            break
        live.holders += 1
        return live

    def add(self, live: LiveTask) -> None:
        """Register a task made here (held by no one until its run starts)."""
        self._live[live.task_id] = live

    def take_hold(self, live: LiveTask) -> None:
        """Hold ``live`` for a run (``TaskRuns.start``), let go when the run ends."""
        live.holders += 1

    def let_go(self, live: LiveTask) -> None:
        """Drop a hold; the task leaves the registry when no one holds it."""
        live.holders -= 1
        if live.holders > 0:
            return
        self.drop(live)
        if live.task is None or is_terminal(live.task.status.state):
            live.log.close()

    def drop(self, live: LiveTask) -> None:
        """``live`` leaves the registry (if it is still the one registered)."""
        if self._live.get(live.task_id) is live:
            del self._live[live.task_id]
            self._drops += 1

    def close(self) -> None:
        """End every reader and empty the registry (server shutdown)."""
        for live in list(self._live.values()):
            live.log.close()
        self._live.clear()
