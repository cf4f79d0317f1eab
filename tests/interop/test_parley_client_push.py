"""parley's client configuring push on an agent built with the official SDK
(``peers/sdk_server.py --push``: its in-memory config store and its
``BasePushNotificationSender``), over each binding (spec 7.5-7.8, 9.5)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.client import connect
from parley.protocol import A2AError
from parley.types import PushNotificationConfig, Task, TaskPushNotificationConfig, TaskState
from tests.interop.sdk import serving_peer
from tests.push.webhook import webhook

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]


@pytest.fixture(scope="module", params=BINDINGS)
def peer(request: pytest.FixtureRequest, sdk: Path) -> Iterator[tuple[str, str]]:
    binding = request.param
    grpc = binding == "GRPC"
    with serving_peer(sdk, "sdk_server.py", "--binding", binding, "--push", grpc=grpc) as served:
        yield binding, f"http://127.0.0.1:{served.port}"


def _config(task_id: str, url: str, config_id: str) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        push_notification_config=PushNotificationConfig(url=url, id=config_id, token="tok"),
    )


async def test_set_and_get_against_the_sdk(peer: tuple[str, str]) -> None:
    """Spec 7.5, 7.6 on every binding."""
    binding, url = peer
    hook = "http://127.0.0.1:9/hook"
    async with connect(url, transports=[binding]) as client:
        task = await client.send_message("ask")
        assert isinstance(task, Task)
        stored = await client.set_push_config(_config(task.id, hook, "c1"))
        assert stored.push_notification_config.url == hook
        assert stored.push_notification_config.id == "c1"
        got = await client.get_push_config(task.id, "c1")
        assert got.push_notification_config.url == hook


async def test_list_and_delete_against_the_sdk(peer: tuple[str, str]) -> None:
    """Spec 7.7, 7.8. a2a-sdk 0.3.26 deviation: only its JSON-RPC serves them (its REST
    list raises NotImplementedError, a 500, and it has no REST delete route; its gRPC
    servicer leaves both unimplemented, UNIMPLEMENTED), and its JSON-RPC delete answer
    leaves out the null ``result``, which parley's client accepts for a method whose
    result is null."""
    binding, url = peer
    hook = "http://127.0.0.1:9/hook"
    async with connect(url, transports=[binding]) as client:
        task = await client.send_message("ask")
        assert isinstance(task, Task)
        await client.set_push_config(_config(task.id, hook, "c1"))
        await client.set_push_config(_config(task.id, hook + "2", "c2"))
        if binding != "JSONRPC":
            with pytest.raises(A2AError):
                await client.list_push_configs(task.id)
            with pytest.raises(A2AError):
                await client.delete_push_config(task.id, "c1")
            return
        listed = await client.list_push_configs(task.id)
        assert sorted(c.push_notification_config.id or "" for c in listed) == ["c1", "c2"]
        await client.delete_push_config(task.id, "c1")
        listed = await client.list_push_configs(task.id)
        assert [c.push_notification_config.id for c in listed] == ["c2"]


async def test_the_sdk_posts_to_the_config_parley_sent(peer: tuple[str, str]) -> None:
    """Spec 9.5: configuration.pushNotificationConfig from parley's client; the SDK posts
    the Task with the token (it signs nothing, so the webhook here reads it raw)."""
    binding, url = peer
    with webhook() as (hook, at):
        async with connect(url, transports=[binding]) as client:
            config = PushNotificationConfig(url=at, token="tok-sdk")
            task = await client.send_message("hello", push_notification_config=config)
        assert isinstance(task, Task)
        await hook.wait_for(1)
    bodies = [json.loads(received.body) for received in hook.received]
    assert {body["id"] for body in bodies} == {task.id}
    assert bodies[-1]["status"]["state"] == TaskState.completed.value
    assert {r.headers.get("x-a2a-notification-token") for r in hook.received} == {"tok-sdk"}
