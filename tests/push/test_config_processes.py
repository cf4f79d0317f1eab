"""Push configs set and deleted through one process reach the process running the task
(spec 7.5, 7.8), with two servers on one PostgreSQL database (each on uvicorn at
127.0.0.1, on a thread and event loop of its own, with its own engine, bus and push
worker) and a real webhook; the bus is PostgreSQL ``LISTEN/NOTIFY``, then Redis.

Process A runs the task and writes the outbox entries of its events; the configs are set
and deleted through process B. A keeps the task's push configs in memory between events,
so B's change must reach it: B's note on the bus (``p <task id>``) makes A read them
again. This once failed: A wrote entries only for the configs it had read before, so a
config set through B got no notification while A ran the task.

SQLite serves one process (``SQLStore.shared`` is false): there is no second process to
test there.
"""

from __future__ import annotations

import asyncio
import json
import queue
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from parley.client import connect
from parley.server import EventSink, RedisBus, RequestContext, TaskUpdater, create_app
from parley.server.push import PushRetry, PushSettings
from parley.stores import Store
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
from tests.stores.databases import served_postgres_stores

REDIS = "redis://127.0.0.1:6379/0"
TICKS = 100
"""Updates A may store, one after another, before B's new config must have reached it."""


class Told:
    """Stores one ``working`` update per text put in ``orders``, until canceled."""

    def __init__(self) -> None:
        self.orders: queue.SimpleQueue[str] = queue.SimpleQueue()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater.for_context(events, context)
        await updater.start_work()
        for _ in range(60_000):  # polls for 120 s at most
            try:
                text = self.orders.get_nowait()
            except queue.Empty:
                await asyncio.sleep(0.002)
                continue
            await updater.update_status(TaskState.working, text)

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        await TaskUpdater.for_context(events, context).cancel()


class Notified:
    """The status texts (``None`` for none) each config got, by config (its token)."""

    def __init__(self, hook: Webhook) -> None:
        self.hook = hook

    def tasks(self, config: str) -> list[dict[str, Any]]:
        """The tasks ``config`` was sent, in arrival order (v0.3 Task or v1.0
        ``StreamResponse`` holding it, by the version the config was set in)."""
        with self.hook.changed:
            received = list(self.hook.received)
        bodies = [
            json.loads(one.body)
            for one in received
            if one.headers["x-a2a-notification-token"] == config
        ]
        return [body.get("task", body) for body in bodies]

    def texts(self, config: str) -> list[str | None]:
        messages = [task["status"].get("message") for task in self.tasks(config)]
        return [message["parts"][0]["text"] if message else None for message in messages]

    def states(self, config: str) -> list[str]:
        states = [task["status"]["state"] for task in self.tasks(config)]
        return [state.lower().removeprefix("task_state_") for state in states]

    async def wait_for(self, wanted: Callable[[], bool]) -> None:
        """Return once ``wanted()`` is true; fail if it is not within 30 s."""

        def wait() -> bool:
            with self.hook.changed:
                return self.hook.changed.wait_for(wanted, 30)

        assert await asyncio.to_thread(wait), "not notified within 30 s"

    async def arrived(self, config: str, text: str) -> None:
        """Return once the update with ``text`` reached ``config`` (fail after 30 s)."""
        await self.wait_for(lambda: text in self.texts(config))


def _config(task_id: str, name: str, url: str) -> TaskPushNotificationConfig:
    config = PushNotificationConfig(id=name, url=url, token=name)
    return TaskPushNotificationConfig(task_id=task_id, push_notification_config=config)


@pytest.fixture
def stores() -> Iterator[tuple[Store, ...]]:
    with served_postgres_stores(2) as stores:
        yield stores


@pytest.mark.postgres
@pytest.mark.parametrize("bus", ["listen-notify", "redis"])
async def test_configs_set_and_deleted_through_another_process_reach_the_running_one(
    stores: tuple[Store, Store], bus: str
) -> None:
    store_a, store_b = stores
    channel = f"parley_test_{uuid.uuid4().hex[:12]}"  # the notes of these two only
    bus_a, bus_b = (RedisBus(REDIS, channel) if bus == "redis" else None for _ in "ab")
    agent = Told()
    push_card = card(capabilities=AgentCapabilities(streaming=True, push_notifications=True))
    push = PushSettings(allow=["127.0.0.1/32"], retry=PushRetry(first=0.05, longest=0.4))
    with (
        running(create_app(agent, push_card, task_store=store_a, push=push, bus=bus_a)) as a,
        running(create_app(agent, push_card, task_store=store_b, push=push, bus=bus_b)) as b,
        webhook() as (hook, url),
    ):
        notified = Notified(hook)
        async with await connect(a) as through_a, await connect(b) as through_b:
            x = PushNotificationConfig(id="x", url=url, token="x")
            task = await through_a.send_message("go", blocking=False, push_notification_config=x)
            assert isinstance(task, Task)  # A runs it, and has read its configs: x
            agent.orders.put("before")
            await notified.arrived("x", "before")

            await through_b.set_push_config(_config(task.id, "y", url))
            for n in range(TICKS):  # every update reaches x; soon one reaches y too
                tick = f"tick {n}"
                agent.orders.put(tick)
                await notified.arrived("x", tick)
                if notified.texts("y"):
                    break
            assert notified.texts("y"), f"{TICKS} updates after B set y, none reached it"
            ticks = n + 1

            await through_b.delete_push_config(task.id, "y")
            agent.orders.put("after")
            await notified.arrived("x", "after")
            await through_b.cancel_task(task.id)  # B's note reaches A, which runs it
            await notified.wait_for(lambda: "canceled" in notified.states("x"))

    updates = ["before", *(f"tick {n}" for n in range(ticks)), "after"]
    assert notified.texts("x") == [None, None, *updates, None]  # submitted, working, ...
    assert notified.states("x")[-1] == "canceled"
    got = notified.texts("y")
    assert got == [f"tick {n}" for n in range(ticks - len(got), ticks)]  # none after delete
    assert "canceled" not in notified.states("y")
