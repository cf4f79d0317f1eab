"""Push for one app: config checks, the outbox entries each event causes, the worker."""

from __future__ import annotations

from collections.abc import Sequence

from parley.protocol import apply
from parley.protocol.early import PUSH_CONFIG_ID, task_to_early
from parley.server._keys import SigningKeys
from parley.server._live import LiveTask
from parley.server.push._configs import PushConfigs, PushSettings
from parley.server.push._worker import PushOutbox, PushWorker
from parley.stores import OutboxEntry, StoredEvent
from parley.types import Task


class PushService:
    """What the request handler needs to serve push (``RequestHandler.push``).

    ``entries`` is called by ``TaskRuns.publish`` for every event it stores: a task with
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
    ) -> None:
        guard = settings.make_guard()
        self.configs = PushConfigs(store, guard)
        self.worker = PushWorker(
            store,
            keys,
            guard=guard,
            retry=settings.retry,
            issuer=issuer,
            concurrency=settings.concurrency,
        )

    async def entries(self, live: LiveTask, stored: StoredEvent) -> Sequence[OutboxEntry]:
        config_ids = live.push_configs
        if config_ids is None:  # read once per live task; set/delete here refresh it
            configs = await self.configs.store.list_push_configs(live.task_id)
            config_ids = live.push_configs = tuple(c.id or live.task_id for c in configs)
        if not config_ids:
            return ()
        # the Task as it will be once this event is folded in: the live task must not
        # change before the event is stored, so a copy is folded
        current = live.task.model_copy(deep=True) if live.task is not None else None
        task = apply(current, stored.event)
        if task is None:
            return ()
        payload = task.to_json().decode()
        return [
            OutboxEntry(
                live.task_id, config_id, stored.sequence, _payload(task, config_id, payload)
            )
            for config_id in config_ids
        ]

    def wake(self) -> None:
        self.worker.wake()

    def start(self) -> None:
        self.worker.start()

    async def aclose(self) -> None:
        await self.worker.aclose()


def _payload(task: Task, config_id: str, v0_3: str) -> str:
    # A config set through the seed-002 dialect gets the task in that dialect's shape
    # (docs/dialect-2025-early.md); every other config, the v0.3 Task.
    if config_id == PUSH_CONFIG_ID:
        return task_to_early(task).to_json().decode()
    return v0_3
