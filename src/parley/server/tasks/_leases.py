"""With a store several processes share: the leases of the tasks this process runs,
and bringing a live task up to date with what other processes stored.

A run takes its task's lease before its first write (``take``: refused while another
process holds it); a live task here that no run of this process works on may have
been moved on elsewhere, and reads the store (``catch_up``) when a note says so or
before it is used.
"""

from __future__ import annotations

from collections.abc import Callable

from parley.protocol import ACTIVE_STATES, apply
from parley.server.tasks._live import LiveTask, Turn
from parley.server.tasks._owners import Ownership
from parley.server.tasks._registry import Registry
from parley.stores import Store


class Leases:
    """This process's leases on the tasks it runs, and catching live tasks up."""

    def __init__(
        self,
        registry: Registry,
        store: Store,
        owners: Ownership | None,
        lost: Callable[[LiveTask, Turn | None], None],
    ) -> None:
        self.registry = registry
        self.store = store
        self.owners = owners
        self._lost = lost
        """Stops a run here whose task another process took over."""

    async def take(self, live: LiveTask, turn: Turn) -> bool:
        """With a shared store: take the task's lease for ``turn`` and bring ``live`` up
        to date with the store (another process may have moved the task on; read only
        when the lease says the store is ahead, or cannot say). False: another process
        runs the task. Whatever it raises, ``turn`` keeps what it took, for its owner to
        give back."""
        if self.owners is None:
            return True
        lease = await self.owners.take(live.task_id)
        if lease is None:
            return False
        turn.lease = lease
        if lease.last_sequence is None or lease.last_sequence > live.log.last_sequence:
            await self.catch_up(live)
        return True

    def promise(self, turn: Turn, task_id: str) -> None:
        """A new task's lease for ``turn``: stored with its first events (``Lease.new``)."""
        if self.owners is not None and turn.lease is None:
            turn.lease = self.owners.promise(task_id)

    async def catch_up(self, live: LiveTask) -> None:
        """Hand ``live``'s readers the events other processes stored since it last
        looked, in order, and take the task as the store has it."""
        async with live.publishing:
            if live.broken or live.log.closed:
                return
            logged = await self.store.events(live.task_id, live.log.last_sequence)
            for stored in logged:
                if stored.sequence != live.log.last_sequence + 1:
                    break
                live.task = apply(live.task, stored.event)
                live.log.append(stored.event)
            if logged:  # the snapshot also holds what no event carries (answers)
                snapshot = await self.store.get(live.task_id)
                if snapshot is not None and snapshot.sequence == live.log.last_sequence:
                    live.task = snapshot.task

    def maybe_elsewhere(self, live: LiveTask) -> bool:
        """Whether another process may run or have moved on ``live`` (a shared store,
        and no run of it here): its copy here is only as fresh as the last note heard."""
        return self.owners is not None and live.turn is None and live.task is not None

    async def elsewhere(self, live: LiveTask, fresh: bool = False) -> bool:
        """With a shared store: bring ``live`` up to date (unless ``fresh``: just read
        from the store), and say whether the task is active but not run here. Another
        process runs it (its events come here through the bus while a reader here
        follows it), or its process died and its lease expired, and the recovery sweep
        of some process (this one's too) settles it soon: either way there is more to
        wait for."""
        if not self.maybe_elsewhere(live):
            return False
        if not fresh:
            await self.catch_up(live)
        assert live.task is not None
        return live.turn is None and live.task.status.state in ACTIVE_STATES

    def holding(self) -> dict[str, int]:
        """The leases this process holds: task id -> fencing token."""
        return {
            live.task_id: live.turn.lease.token
            for live in self.registry
            if live.turn is not None and live.turn.lease is not None and not live.turn.lease.new
        }

    def lost_leases(self, lost: dict[str, int]) -> None:
        """The heartbeat could not renew these leases (task id -> token): stop their runs
        here, unless the task has been given up or taken again since (another token)."""
        for task_id, token in lost.items():
            live = self.registry.get(task_id)
            turn = live.turn if live is not None else None
            lease = turn.lease if turn is not None else None
            if live is not None and lease is not None and lease.token == token:
                self._lost(live, turn)
