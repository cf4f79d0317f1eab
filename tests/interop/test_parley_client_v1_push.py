"""parley's client (A2A 1.0) configuring push on an a2a-sdk 1.3 agent that serves only
1.0 and keeps configs in the SDK's in-memory store (``peers/sdk1_server.py --push``), on
every binding (v1.0.1 §3.1.7-3.1.10)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.client import connect
from parley.protocol import A2AError
from parley.types import PushNotificationConfig, Task, TaskPushNotificationConfig
from tests.interop.sdk import serving_peer

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
HOOK = "http://127.0.0.1:9/hook"  # nothing is posted: the task waits for input


@pytest.fixture(scope="module")
def agent(sdk1: Path) -> Iterator[str]:
    with serving_peer(sdk1, "sdk1_server.py", "--push", grpc=True) as served:
        yield f"http://127.0.0.1:{served.port}"


def _config(task_id: str, config_id: str) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        push_notification_config=PushNotificationConfig(url=HOOK, id=config_id, token="tok"),
    )


@pytest.mark.parametrize("binding", BINDINGS)
async def test_create_get_list_delete(agent: str, binding: str) -> None:
    async with connect(agent, transports=[binding]) as client:
        assert client.transport.interface.protocol == "1.0"  # type: ignore[attr-defined]
        task = await client.send_message("ask")
        assert isinstance(task, Task)
        for config_id in ("c1", "c2"):
            stored = await client.set_push_config(_config(task.id, config_id))
            assert stored.task_id == task.id
            assert stored.push_notification_config.url == HOOK
            assert stored.push_notification_config.id == config_id
        got = await client.get_push_config(task.id, "c1")
        assert (got.push_notification_config.id, got.push_notification_config.token) == (
            "c1",
            "tok",
        )
        listed = await client.list_push_configs(task.id)
        assert sorted(c.push_notification_config.id or "" for c in listed) == ["c1", "c2"]
        await client.delete_push_config(task.id, "c1")
        listed = await client.list_push_configs(task.id)
        assert [c.push_notification_config.id for c in listed] == ["c2"]
        with pytest.raises(A2AError):
            await client.get_push_config(task.id, "c1")
