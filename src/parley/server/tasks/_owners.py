"""Task ownership across processes: this process's leases on a shared store.

Theory of operation
-------------------
When several processes serve one database, each task is run by at most one of them:
the one holding the task's *lease* (``LeaseStore``). A process takes the lease before
a run's first write and gives it up with the event that ends the interaction; every
append carries the lease, and the store refuses it once the lease has passed to
another process (its fencing token grew), so a process that lost a task can never
write into its log.

A background heartbeat renews all of this process's leases every third of the lease
time. A lease it could not renew is lost (the process stalled past the lease time):
its run is stopped. The same loop also looks, every lease time, for tasks left
running by a process that died (its lease expired) and settles them, as start-up
recovery does; a lease held by a live process is never touched.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable

from parley.server.agent._ids import new_id
from parley.stores import Lease, LeaseStore

logger = logging.getLogger("parley.server")

DEFAULT_LEASE_TTL = 10.0
"""Seconds a lease lasts without renewal: how long a crashed process's tasks wait."""


class Ownership:
    """This process's identity and leases on a store shared with other processes."""

    def __init__(self, store: LeaseStore, ttl: float = DEFAULT_LEASE_TTL) -> None:
        self.store = store
        self.ttl = ttl
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{new_id()[:8]}"
        self._beating: asyncio.Task[None] | None = None

    async def take(self, task_id: str) -> Lease | None:
        """The task's lease for this process, or ``None`` if another process holds it."""
        return await self.store.acquire_lease(task_id, self.holder, self.ttl)

    def promise(self, task_id: str) -> Lease:
        """The lease of a task this process has just created (no other process knows
        its id yet), not stored: the task's first append stores it (``Lease.new``)."""
        return Lease(task_id, self.holder, 1, time.time() + self.ttl, 0, new=True)

    async def give_up(self, lease: Lease) -> None:
        if lease.new:  # never stored: nothing to give up
            return
        try:
            await self.store.release_lease(lease)
        except Exception:  # it expires on its own
            logger.exception("could not release the lease of task %s", lease.task_id)

    def start(
        self,
        lost: Callable[[dict[str, int]], None],
        sweep: Callable[[], Awaitable[object]],
        holding: Callable[[], dict[str, int]],
    ) -> None:
        """Heartbeat: renew, report the leases lost (``lost``, task id -> token, of those
        ``holding`` listed before renewing), and every lease time run ``sweep``
        (recovery of expired leases)."""
        if self._beating is None:
            self._beating = asyncio.create_task(
                self._beat(lost, sweep, holding), name="parley-heartbeat"
            )

    async def _beat(
        self,
        lost: Callable[[dict[str, int]], None],
        sweep: Callable[[], Awaitable[object]],
        holding: Callable[[], dict[str, int]],
    ) -> None:
        beats = 0
        while True:
            await asyncio.sleep(self.ttl / 3)
            beats += 1
            try:
                expected = holding()
                held = await self.store.renew_leases(self.holder, self.ttl)
                missing = {
                    t: token
                    for t, token in expected.items()
                    if t not in held and await self._taken_over(t, token)
                }
                if missing:
                    logger.warning("lost the lease of tasks %s", sorted(missing))
                    lost(missing)
                if beats % 3 == 0:
                    await sweep()
            except Exception:  # a bad beat must not stop the next one
                logger.exception("heartbeat: could not renew leases")

    async def _taken_over(self, task_id: str, token: int) -> bool:
        """Whether another process holds the task now (a lease this process gave up
        while the heartbeat ran is not lost)."""
        lease = await self.store.get_lease(task_id)
        return lease is None or lease.holder != self.holder or lease.token != token

    async def aclose(self) -> None:
        beating, self._beating = self._beating, None
        if beating is not None:
            beating.cancel()
            await asyncio.gather(beating, return_exceptions=True)
