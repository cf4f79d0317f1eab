"""Push notifications in the A2A version their config was set in (v1.0.1 §4.3.3): a config
set through v1.0 gets each update as a v1.0 ``StreamResponse`` holding the task, one set
through v0.3 the v0.3 Task, on the same task at the same time; parley's receiver takes
both. A real agent on uvicorn posts to real webhooks on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from google.protobuf import json_format

from parley.client import AgentKeys, Client, ClientConfig, ClientFactory
from parley.protocol.v1 import pb1
from parley.server import GRPCOptions, create_app
from parley.server.push import PushRetry, PushSettings
from parley.types import (
    AgentCapabilities,
    PushNotificationConfig,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from tests.push.webhook import webhook
from tests.server.agents import ScriptedAgent, card
from tests.servers import running

FAST = PushRetry(first=0.05, longest=0.4, timeout=5.0)
V1_STATES = ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", *["TASK_STATE_WORKING"] * 3]
V1_STATES.append("TASK_STATE_COMPLETED")
"""``chunks 3``: the task, working, three artifact chunks, completed."""


@pytest.fixture(scope="module")
def agent() -> Iterator[str]:
    push_card = card(capabilities=AgentCapabilities(streaming=True, push_notifications=True))
    app = create_app(
        ScriptedAgent(),
        push_card,
        push=PushSettings(allow=["127.0.0.1/32"], retry=FAST),
        grpc=GRPCOptions(host="127.0.0.1", port=0),
    )
    with running(app) as base:
        yield base


async def _client(base: str, protocol: str, binding: str = "JSONRPC") -> Client:
    return await ClientFactory(ClientConfig(transports=[binding], protocol=protocol)).connect(base)


def _stream_response(body: bytes) -> dict[str, object]:
    """The body, checked to be ProtoJSON of ``lf.a2a.v1.StreamResponse`` (nothing unknown)."""
    data = json.loads(body)
    json_format.ParseDict(data, pb1.StreamResponse(), ignore_unknown_fields=False)
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_a_config_set_in_v1_gets_v1_stream_responses(agent: str, binding: str) -> None:
    with webhook() as (hook, url):
        async with await _client(agent, "1.0", binding) as client:
            task = await client.send_message(
                "chunks 3", push_notification_config=PushNotificationConfig(url=url)
            )
        assert isinstance(task, Task)
        await hook.wait_for(len(V1_STATES))
    bodies = [_stream_response(received.body) for received in hook.received]
    assert [list(body) for body in bodies] == [["task"]] * len(V1_STATES)
    tasks = [body["task"] for body in bodies]
    assert [t["status"]["state"] for t in tasks] == V1_STATES  # type: ignore[index]
    assert {t["id"] for t in tasks} == {task.id}  # type: ignore[index]


async def test_each_config_gets_the_version_it_was_set_in(agent: str) -> None:
    with webhook() as (old, old_url), webhook() as (new, new_url):
        async with await _client(agent, "0.3") as v03, await _client(agent, "1.0") as v10:
            asked = await v03.send_message("ask")
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.input_required
            for client, url, config_id in ((v03, old_url, "old"), (v10, new_url, "new")):
                config = PushNotificationConfig(url=url, id=config_id)
                await client.set_push_config(
                    TaskPushNotificationConfig(task_id=asked.id, push_notification_config=config)
                )
            done = await v03.send_message("done", task_id=asked.id, context_id=asked.context_id)
        assert isinstance(done, Task)
        await old.wait_for(3)  # working, the artifact, completed
        await new.wait_for(3)
    olds = [Task.model_validate_json(received.body) for received in old.received]
    news = [_stream_response(received.body)["task"] for received in new.received]
    assert [t.status.state for t in olds][-1] is TaskState.completed
    assert [t["status"]["state"] for t in news][-1] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    assert all("kind" not in t for t in news)  # type: ignore[operator]
    assert len(olds) == len(news)


async def test_parleys_receiver_takes_v1_notifications(agent: str) -> None:
    with webhook(AgentKeys.of_agent(agent)) as (hook, url):
        async with await _client(agent, "1.0") as client:
            task = await client.send_message(
                "chunks 3", push_notification_config=PushNotificationConfig(url=url)
            )
        await hook.wait_for(len(V1_STATES))
    assert isinstance(task, Task)
    assert [t.status.state.value for t in hook.tasks] == [
        "submitted", "working", "working", "working", "working", "completed"
    ]  # fmt: skip
    assert hook.tasks[-1].artifacts == task.artifacts
