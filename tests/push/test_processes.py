"""Two agent processes on one PostgreSQL database share the push outbox: each
notification is delivered once, by one of them (their claims are leased rows)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from parley.client import AgentKeys, connect
from parley.types import PushNotificationConfig, Task, TaskState
from tests.push.push_agent import CHUNKS
from tests.push.test_restart import _key, _postgres_database, _serve
from tests.push.webhook import webhook
from tests.servers import listening_socket

UPDATES = 1 + CHUNKS + 1  # the task (created working by @agent), the chunks, completed


@pytest.mark.postgres
async def test_two_processes_deliver_each_notification_once(tmp_path: Path) -> None:
    key = _key(tmp_path)  # one key for both: the receiver verifies either one's posts
    async with _postgres_database() as database:  # may skip: no socket open yet
        down = listening_socket()  # the webhook's port, refusing connections until it serves
        hook_url = f"http://127.0.0.1:{down.getsockname()[1]}/hook"
        with _serve(database, tmp_path / "one.log", key) as (_, one):
            tasks = []
            async with await connect(one) as client:
                for _ in range(3):  # finished while the webhook is down: all pending
                    config = PushNotificationConfig(url=hook_url)
                    task = await client.send_message("go", push_notification_config=config)
                    assert isinstance(task, Task)
                    tasks.append(task.id)
            with (
                _serve(database, tmp_path / "two.log", key),
                webhook(AgentKeys.of_agent(one), down) as (hook, _),
            ):
                await hook.wait_for(3 * UPDATES)
                await asyncio.sleep(1.0)  # time for a duplicate to show, if there were one
    assert len(hook.tasks) == 3 * UPDATES
    for task_id in tasks:
        mine = [t for t in hook.tasks if t.id == task_id]
        assert [t.status.state for t in mine][-1] is TaskState.completed
        chunks = [sum(len(a.parts) for a in t.artifacts or ()) for t in mine]
        assert chunks == [0, *range(1, CHUNKS + 1), CHUNKS]
