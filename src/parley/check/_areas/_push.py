"""Push notification configs: set, get, list and delete when declared; the version's
error when not."""

from __future__ import annotations

import json
import uuid

from parley.check._areas._tasks import GREETING, a_task
from parley.check._areas._wire import rest_path, unknown_task_id
from parley.check._model import REST, V1_0, Failed, Level, Needs, Skipped, check
from parley.check._probe import Probe
from parley.protocol import (
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
)
from parley.types import Message, PushNotificationConfig, Task, TaskPushNotificationConfig

_PUSH = "pushNotifications"


def _config(probe: Probe, task_id: str) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        push_notification_config=PushNotificationConfig(id="a2a-check", url=probe.agent.webhook),
    )


@check(
    "push.configs",
    "A push config can be set, read, listed and deleted",
    Level.must,
    v03="7.5",
    v10="3.1.7",
    needs=Needs(capability=_PUSH),
)
async def configs(probe: Probe) -> None:
    task = await a_task(probe)
    client = await probe.client()
    config_id = await _set_config(probe, task)
    read = await probe.ok("get_push_config", client.get_push_config(task.id, config_id))
    if read.push_notification_config.url != probe.agent.webhook:
        raise Failed(f"get_push_config answered url {read.push_notification_config.url!r}")
    listed = await probe.ok("list_push_configs", client.list_push_configs(task.id))
    if config_id not in [c.push_notification_config.id for c in listed]:
        raise Failed(f"list_push_configs does not list {config_id!r}")
    await probe.ok("delete_push_config", client.delete_push_config(task.id, config_id))
    after = await probe.ok("list_push_configs", client.list_push_configs(task.id))
    if config_id in [c.push_notification_config.id for c in after]:
        raise Failed(f"{config_id!r} is still listed after delete_push_config")


async def _set_config(probe: Probe, task: Task) -> str:
    """Set a push config on ``task``; its id. ``Skipped`` when the webhook is refused."""
    client = await probe.client()
    try:
        made = await client.set_push_config(_config(probe, task.id))
    except InvalidParamsError as error:
        probe.record("set_push_config", f"InvalidParamsError: {error.message}")
        raise Skipped(
            f"the agent refuses the webhook {probe.agent.webhook} ({error.message}); "
            "give one it accepts (--webhook)"
        ) from None
    return made.push_notification_config.id or "a2a-check"


@check(
    "push.delete-answer",
    "HTTP+JSON answers a push config delete with a JSON object ({} for its empty result)",
    Level.should,
    v10="11.4",
    needs=Needs(versions=(V1_0,), bindings=(REST,), capability=_PUSH),
)
async def delete_answer(probe: Probe) -> None:
    task = await a_task(probe)
    config_id = await _set_config(probe, task)
    verb, path = rest_path(probe, "delete_push_config", id=task.id, config_id=config_id)
    response = await probe.rest(verb, path)
    if not response.is_success:
        raise Failed(f"the delete answered HTTP {response.status_code}")
    try:
        body = json.loads(response.content)
    except ValueError:
        raise Failed(
            f"the delete answered HTTP {response.status_code} with no JSON body "
            f"({len(response.content)} bytes); a2a.proto's google.protobuf.Empty is {{}}"
        ) from None
    if not isinstance(body, dict):
        raise Failed(f"the delete answered {type(body).__name__}, not a JSON object")


@check(
    "push.task-not-found",
    "Listing the push configs of an unknown task is TaskNotFoundError",
    Level.must,
    v03="7.7",
    v10="3.1.9",
    needs=Needs(capability=_PUSH),
)
async def task_not_found(probe: Probe) -> None:
    client = await probe.client()
    await probe.error(
        "list_push_configs", client.list_push_configs(unknown_task_id()), TaskNotFoundError
    )


@check(
    "push.not-declared",
    "Push config operations on an agent without push are PushNotificationNotSupportedError",
    Level.must,
    v03="8.2",
    v10="3.3.4",
    needs=Needs(capability="!pushNotifications"),
)
async def not_declared(probe: Probe) -> None:
    task = await a_task(probe)
    client = await probe.client()
    expected = PushNotificationNotSupportedError
    await probe.error("set_push_config", client.set_push_config(_config(probe, task.id)), expected)
    await probe.error("get_push_config", client.get_push_config(task.id, "a2a-check"), expected)
    await probe.error("list_push_configs", client.list_push_configs(task.id), expected)
    await probe.error(
        "delete_push_config", client.delete_push_config(task.id, "a2a-check"), expected
    )


_V1_EVENTS = ("task", "message", "statusUpdate", "artifactUpdate")


@check(
    "push.delivery",
    "A message sent with a push config has its task's update POSTed to the webhook",
    Level.must,
    v03="9.5",
    v10="4.3.3",
    needs=Needs(capability=_PUSH, receiver=True),
)
async def delivery(probe: Probe) -> None:
    receiver = probe.agent.receiver
    assert receiver is not None
    path = f"/a2a-check/{uuid.uuid4().hex}"
    config = PushNotificationConfig(url=receiver.url + path, token=uuid.uuid4().hex)
    client = await probe.client()
    sent = client.send_message(GREETING, push_notification_config=config)
    result = await probe.ok("send_message with a push config", sent)
    if isinstance(result, Message):
        raise Skipped("the agent answered with a Message: there is no task to notify")
    wait = max(1.0, probe.agent.call_timeout - 1.0)
    deliveries = await receiver.wait(path, wait)
    for item in deliveries:
        kind = item.headers.get("content-type")
        said = f"(the agent) POST {config.url}\ncontent-type: {kind}"
        probe.record(said, item.body.decode(errors="replace"))
    if not deliveries:
        raise Failed(f"no notification reached {config.url} within {wait:g} s")
    for item in deliveries:
        _notification_of(probe, item.body, result.id)


def _notification_of(probe: Probe, body: bytes, task_id: str) -> None:
    try:
        payload = json.loads(body)
    except ValueError:
        raise Failed("a notification's body is not JSON") from None
    if not isinstance(payload, dict):
        raise Failed("a notification's body is not a JSON object")
    if probe.v1:
        kinds = [k for k in _V1_EVENTS if k in payload]
        if len(kinds) != 1 or len(payload) != 1:
            raise Failed(f"a notification is not a StreamResponse (one of {_V1_EVENTS})")
        event = payload[kinds[0]]
        named = event.get("id") if kinds[0] == "task" else event.get("taskId")
    else:
        named = payload.get("id")
    if named != task_id:
        raise Failed(f"a notification names task {named!r}, not {task_id!r}")
