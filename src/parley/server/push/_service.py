"""Push for one app: config checks, the outbox entries each event causes, the worker."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from pydantic_core import to_json

from parley.protocol import apply
from parley.protocol._versions import V1_0
from parley.protocol.early import PUSH_CONFIG_ID, task_to_early
from parley.protocol.v1 import event_to_v1
from parley.server.auth._keys import SigningKeys
from parley.server.push._configs import PushConfigs, PushSettings
from parley.server.push._worker import PushOutbox, PushWorker
from parley.stores import OutboxEntry, StoredEvent
from parley.types import Task

if TYPE_CHECKING:
    from parley.telemetry import Telemetry


class PushedTask(Protocol):
    """What push sees of a live task: its id and its push configs as last read."""

    @property
    def task_id(self) -> str: ...

    push_configs: tuple[tuple[str, str], ...] | None
    """As (config id, the A2A version it was set in); ``None``: to be read again."""

    @property
    def push_changes(self) -> int:
        """How often the task's push configs were changed here."""
        ...


_READS = 3
"""Reads of a task's push configs for one event while they keep changing meanwhile."""


class PushService:
    """What the request handler needs to serve push (``RequestHandler.push``).

    ``entries`` is called by the engine's publish for every event it stores: a task with
    push configs gets one outbox entry per config, holding the Task as it stands after
    the event, written in the same transaction as the event.
    """

    def __init__(
        self,
        store: PushOutbox,
        keys: SigningKeys,
        settings: PushSettings,
        *,
        issuer: str | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.telemetry = telemetry
        guard = settings.make_guard()
        self.configs = PushConfigs(store, guard)
        self.worker = PushWorker(
            store,
            keys,
            guard=guard,
            retry=settings.retry,
            issuer=issuer,
            concurrency=settings.concurrency,
            telemetry=telemetry,
        )

    async def entries(
        self, live: PushedTask, stored: StoredEvent, task: Task | None
    ) -> Sequence[OutboxEntry]:
        """The outbox entries of ``stored``: one per push config of the task, with the
        task as it will be once the event is folded into ``task`` (the live task as the
        events stored with this one leave it)."""
        targets = live.push_configs
        if targets is None:  # read once per live task and again after each change
            targets = await self._targets(live)
        if not targets:
            return ()
        # the Task as it will be once this event is folded in: the live task must not
        # change before the event is stored, so a copy is folded
        current = task.model_copy(deep=True) if task is not None else None
        folded = apply(current, stored.event)
        if folded is None:
            return ()
        shapes: dict[str, str] = {}  # each shape made once, however many configs want it
        telemetry = self.telemetry
        run = None if telemetry is None else telemetry.run_traceparent(live.task_id)
        return [
            OutboxEntry(
                live.task_id,
                config_id,
                stored.sequence,
                _payload(folded, config_id, version, shapes),
                traceparent=run,
            )
            for config_id, version in targets
        ]

    async def _targets(self, live: PushedTask) -> tuple[tuple[str, str], ...]:
        """The task's push configs as the store has them. Kept in ``live`` only when
        none was changed during the read: a change stored meanwhile may be missing from
        what was read, and keeping it would undo the change for every later event."""
        for _ in range(_READS):
            changes = live.push_changes
            versions = await self.configs.store.push_config_versions(live.task_id)
            if live.push_changes == changes:
                live.push_configs = tuple(versions.items())
                return live.push_configs
        return tuple(versions.items())  # changing all the time: this event takes the last

    def wake(self) -> None:
        self.worker.wake()

    def start(self) -> None:
        self.worker.start()

    async def aclose(self) -> None:
        await self.worker.aclose()


def _payload(task: Task, config_id: str, version: str, shapes: dict[str, str]) -> str:
    """The task as a config wants it: a config set in v1.0 gets a v1.0 ``StreamResponse``
    holding the task (v1.0.1 §4.3.3), the 2025-early dialect's config (its fixed id) the
    task in that dialect's shape (docs/dialect-2025-early.md), every other the v0.3 Task."""
    shape = "early" if config_id == PUSH_CONFIG_ID else version
    made = shapes.get(shape)
    if made is None:
        made = shapes[shape] = _SHAPES.get(shape, _v0_3_payload)(task)
    return made


def _v0_3_payload(task: Task) -> str:
    return task.to_json().decode()


_SHAPES: dict[str, Callable[[Task], str]] = {
    "early": lambda task: task_to_early(task).to_json().decode(),
    V1_0: lambda task: to_json(event_to_v1(task)).decode(),
}
"""The payload of a config set in each version (v0.3's, ``_v0_3_payload``, for any
other), and of the 2025-early dialect's config."""
