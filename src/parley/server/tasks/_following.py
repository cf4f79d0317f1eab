"""Following tasks that other processes run: the notes this process hears over the bus,
as typed calls (``Listener`` of ``_bus``), and the follows of its readers.

A note that a task has events this process has not seen starts a catch-up of the live
task here (unless a run here wrote them); a note that a task's push configs changed
makes its next event read them again; a cancel asked by another process goes to
``on_cancel``; and after notes may have been missed, every live task catches up.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

from parley.server.tasks._bus import Bus
from parley.server.tasks._live import LiveTask
from parley.server.tasks._registry import Registry


class Following:
    """This process's side of the bus: what it hears, and what its readers follow."""

    def __init__(
        self,
        registry: Registry,
        bus: Bus | None,
        catch_up: Callable[[LiveTask], Coroutine[Any, Any, None]],
        spawn: Callable[[Coroutine[Any, Any, None], str], None],
    ) -> None:
        self.registry = registry
        self.bus = bus
        self._catch_up = catch_up
        self._spawn = spawn
        self.on_cancel: Callable[[str], None] | None = None
        """Called when another process asks to cancel a task (``Cancels.heard``)."""

    @contextmanager
    def following(self, task_id: str) -> Iterator[None]:
        """For the block, a reader here waits for the task's events, wherever it runs:
        the other processes note them (see ``Bus.follow``)."""
        bus = self.bus
        if bus is None:
            yield
            return
        bus.follow(task_id)
        try:
            yield
        finally:
            bus.unfollow(task_id)

    # -- the ``Listener`` of ``_bus``: what the notes heard say ------------------------

    def events_stored(self, task_id: str, sequence: int | None) -> None:
        """``task_id`` has events up to ``sequence`` (``None``: maybe any)."""
        live = self.registry.get(task_id)
        if live is not None:
            self._caught_up(live, sequence)

    def cancel_asked(self, task_id: str) -> None:
        if self.on_cancel is not None:
            self.on_cancel(task_id)

    def push_configs_changed(self, task_id: str) -> None:
        live = self.registry.get(task_id)
        if live is not None:
            live.push_configs_changed()

    def missed(self) -> None:
        """Notes may have been missed: every live task catches up and reads its push
        configs again (a push note may be among those missed)."""
        for live in self.registry:
            self._caught_up(live, None)
            live.push_configs_changed()

    def _caught_up(self, live: LiveTask, sequence: int | None) -> None:
        if _writes_here(live):
            return  # run here: this process wrote them
        if sequence is not None and live.log.last_sequence >= sequence:
            return
        self._spawn(self._catch_up(live), f"parley-catch-up-{live.task_id}")


def _writes_here(live: LiveTask) -> bool:
    """Whether a run of this process holds ``live``'s lease, and so wrote its events. A
    run slot without a lease is not one: a send or a recovery sweep waiting to take the
    lease, which another process may hold and be writing with."""
    turn = live.turn
    return turn is not None and turn.lease is not None
