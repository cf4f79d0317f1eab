"""Push configs set and deleted while the task's events are being stored (spec 7.5, 7.8;
v1.0.1 §4.3.3), with real concurrent clients over real HTTP on 127.0.0.1, on the memory
and SQLite stores (PostgreSQL reads and writes push configs through the same SQL code as
SQLite; it takes five times as long).

Rounds go in threes over a pair of configs: two clients at once set the pair (one in
v0.3, one in v1.0), then set it again (each in the other version), then delete it, while
the agent stores six status updates back to back. Once a round's changes are answered
the agent stores one more update: it must reach each config then set, in the version it
was last set in. At the end the ``canceled`` notification reaches the configs still set
and none of the deleted ones.

This once failed: the push configs a live task caches were read from the store across an
await and written back afterwards, so a config set, deleted or set again while that read
was under way was overwritten by what the read had seen before it, until the next change.
"""

from __future__ import annotations

import asyncio
import json
import queue
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from parley.client import Client, ClientConfig, ClientFactory
from parley.server import EventSink, RequestContext, TaskUpdater, create_app
from parley.server.push import PushRetry, PushSettings
from parley.types import (
    AgentCapabilities,
    PushNotificationConfig,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from tests.push.webhook import Webhook, webhook
from tests.server.agents import card
from tests.servers import running
from tests.stores.databases import served_store

TRIALS = 3
ROUNDS = 3 * 7 + 1
BURST = 6
"""Status updates the agent stores back to back while a round's configs change."""


class Ticking:
    """Stores the status updates ``orders`` asks for until canceled: a number, that many
    ``working`` updates back to back; a text, one update with it as its message."""

    def __init__(self) -> None:
        self.orders: queue.SimpleQueue[int | str] = queue.SimpleQueue()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater.for_context(events, context)
        await updater.start_work()
        for _ in range(100_000):  # polls for 200 s at most
            try:
                order = self.orders.get_nowait()
            except queue.Empty:
                await asyncio.sleep(0.002)
                continue
            if isinstance(order, str):
                await updater.update_status(TaskState.working, order)
                continue
            for _ in range(order):
                await updater.update_status(TaskState.working)

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        await TaskUpdater.for_context(events, context).cancel()


@pytest.fixture(params=["memory", "sqlite"])
def agent(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Ticking]]:
    push_card = card(capabilities=AgentCapabilities(streaming=True, push_notifications=True))
    retry = PushRetry(first=0.05, longest=0.4, timeout=5.0)
    push = PushSettings(allow=["127.0.0.1/32"], retry=retry)
    ticking = Ticking()
    with (
        served_store(request.param, tmp_path) as store,
        running(create_app(ticking, push_card, task_store=store, push=push)) as base,
    ):
        yield base, ticking


class Notified:
    """What a webhook got, by config (each config's token is its id), read as it arrives."""

    def __init__(self, hook: Webhook) -> None:
        self.hook = hook
        self.read = 0
        self.got: dict[str, list[tuple[str, str | None]]] = {}
        """Per config, each notification's A2A version (``"1.0"``: a ``StreamResponse``
        holding the task, ``"0.3"``: the Task) and its status message's text."""
        self.canceled: set[str] = set()

    def update(self) -> None:
        """Take in what arrived since the last call (``hook.changed`` held)."""
        for one in self.hook.received[self.read :]:
            body = json.loads(one.body)
            task = body.get("task", body)
            message = task["status"].get("message")
            text = message["parts"][0]["text"] if message else None
            config = one.headers["x-a2a-notification-token"]
            self.got.setdefault(config, []).append(("1.0" if "task" in body else "0.3", text))
            if task["status"]["state"] in {"canceled", "TASK_STATE_CANCELED"}:
                self.canceled.add(config)
        self.read = len(self.hook.received)

    async def wait_for(self, wanted: Callable[[], bool]) -> bool:
        """Whether ``wanted()`` comes true within 30 s."""

        def check() -> bool:
            self.update()
            return wanted()

        def wait() -> bool:
            with self.hook.changed:
                return self.hook.changed.wait_for(check, 30)

        return await asyncio.to_thread(wait)


def _config(task_id: str, name: str, url: str) -> TaskPushNotificationConfig:
    config = PushNotificationConfig(id=name, url=url, token=name)
    return TaskPushNotificationConfig(task_id=task_id, push_notification_config=config)


async def _round(
    clients: dict[str, Client], agent: Ticking, task_id: str, url: str, notified: Notified, n: int
) -> dict[str, str]:
    """Round ``n`` (see the module's docstring); returns the configs set after it, with
    the version each was last set in."""
    pair, step = f"{task_id}-{n // 3}", n % 3
    versions = {f"{pair}-a": "0.3", f"{pair}-b": "1.0"}  # as the pair is set first
    if step == 1:  # set again, each in the other version
        versions = {f"{pair}-a": "1.0", f"{pair}-b": "0.3"}
    agent.orders.put(BURST)
    if step == 2:
        await asyncio.gather(*(clients["0.3"].delete_push_config(task_id, c) for c in versions))
        versions = {}
    else:
        await asyncio.gather(
            *(clients[v].set_push_config(_config(task_id, c, url)) for c, v in versions.items())
        )
    after = f"after round {n}"
    agent.orders.put(after)  # stored after every change above was answered

    def marked(config: str) -> list[str]:
        return [version for version, text in notified.got.get(config, []) if text == after]

    arrived = await notified.wait_for(lambda: all(marked(config) for config in versions))
    assert arrived, f"round {n}: {after!r} reached only {[c for c in versions if marked(c)]}"
    wrong = {c: marked(c) for c, v in versions.items() if marked(c) != [v]}
    assert not wrong, f"round {n}: {after!r} came in the wrong version: {wrong}, not {versions}"
    if step == 0:  # new: all its notifications in its version
        for config, version in versions.items():
            assert {v for v, _ in notified.got[config]} == {version}, config
    return versions


async def _trial(clients: dict[str, Client], agent: Ticking, url: str, notified: Notified) -> None:
    task = await clients["0.3"].send_message("tick", blocking=False)
    assert isinstance(task, Task)
    for n in range(ROUNDS):
        kept = await _round(clients, agent, task.id, url, notified, n)
    await clients["0.3"].cancel_task(task.id)
    assert await notified.wait_for(lambda: kept.keys() <= notified.canceled)
    mine = {config for config in notified.canceled if config.startswith(task.id)}
    assert mine == kept.keys()  # and none of the deleted configs


async def test_configs_set_and_deleted_while_events_are_stored(
    agent: tuple[str, Ticking],
) -> None:
    base, ticking = agent
    with webhook() as (hook, url):
        notified = Notified(hook)
        v03 = await ClientFactory(ClientConfig(protocol="0.3")).connect(base)
        v10 = await ClientFactory(ClientConfig(protocol="1.0")).connect(base)
        async with v03, v10:
            for _ in range(TRIALS):
                await _trial({"0.3": v03, "1.0": v10}, ticking, url, notified)
