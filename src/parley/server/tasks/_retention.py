"""How long finished and abandoned tasks are kept, and the job that removes them.

The job removes expired tasks a batch at a time (``Retention.batch`` tasks, each batch
one short transaction), and between batches gives the store as much time as the batch
took, at least ``Retention.pause``: removing a million expired tasks then takes at most
about half of the store's time, and a request never waits behind more than one batch.
"""

from __future__ import annotations

import asyncio
import logging
import time
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
    batch: int = 200
    """Tasks removed per transaction (with their events, sent messages, push configs,
    outbox entries and lease: about five rows each for a short task)."""
    pause: timedelta = timedelta(milliseconds=20)
    """The least time between two batches; the job waits as long as the last batch took
    when that is longer, so that requests get the store at least half of the time."""

    def __post_init__(self) -> None:
        if self.batch < 1:
            raise ValueError(f"Retention.batch must be at least 1, not {self.batch}")


class RetentionJob:
    """Removes expired tasks and their events from a store, in the background."""

    def __init__(self, store: TaskStore, retention: Retention) -> None:
        self.store = store
        self.retention = retention
        self._task: asyncio.Task[None] | None = None

    async def sweep(self) -> int:
        """Remove the tasks expired by now, a batch at a time with a pause between
        batches; returns how many."""
        retention = self.retention
        now = datetime.now(UTC)
        ended, waiting = now - retention.ended, now - retention.waiting
        least = retention.pause.total_seconds()
        removed = 0
        while True:
            started = time.monotonic()
            count = await self.store.expire(
                ended_before=ended, waiting_before=waiting, limit=retention.batch
            )
            removed += count
            if count < retention.batch:
                return removed
            await asyncio.sleep(max(least, time.monotonic() - started))

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
