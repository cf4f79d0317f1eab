"""How long finished and abandoned tasks are kept, and the job that removes them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from parley.stores import TaskStore

logger = logging.getLogger("parley.server")


@dataclass(frozen=True, slots=True)
class Retention:
    """Time-to-live of stored tasks, counted from their last activity (last event, or
    last message received). Tasks an agent is running on are never removed."""

    ended: timedelta = timedelta(days=7)
    """For tasks in a terminal state: completed, canceled, failed, rejected."""
    waiting: timedelta = timedelta(days=7)
    """For tasks waiting for the client: input-required, auth-required."""
    interval: timedelta = timedelta(hours=1)
    """How often the job looks for expired tasks (and once at startup)."""


class RetentionJob:
    """Removes expired tasks and their events from a store, in the background."""

    def __init__(self, store: TaskStore, retention: Retention) -> None:
        self.store = store
        self.retention = retention
        self._task: asyncio.Task[None] | None = None

    async def sweep(self) -> int:
        """Remove the tasks expired by now; returns how many."""
        now = datetime.now(UTC)
        return await self.store.expire(
            ended_before=now - self.retention.ended, waiting_before=now - self.retention.waiting
        )

    def start(self, after_sweep: Callable[[], Awaitable[None]] | None = None) -> None:
        """Sweep now and every ``interval``; ``after_sweep`` runs after each sweep that
        removed tasks (the server ends the readers of removed tasks with it)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(after_sweep), name="parley-retention")

    async def _run(self, after_sweep: Callable[[], Awaitable[None]] | None) -> None:
        while True:
            try:
                removed = await self.sweep()
                if removed and after_sweep is not None:
                    await after_sweep()
            except Exception:  # a bad sweep must not stop the next one
                logger.exception("retention: could not remove expired tasks")
            else:
                if removed:
                    logger.info("retention: removed %d expired tasks", removed)
            await asyncio.sleep(self.retention.interval.total_seconds())

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


DEFAULT_RETENTION = Retention()
"""A week for finished tasks and for tasks left waiting, checked every hour."""
