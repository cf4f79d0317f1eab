"""Push delivery end to end (spec 9.5): a real agent on uvicorn POSTs every update of a
task to a real webhook on 127.0.0.1 (allowed explicitly), which verifies each one with
parley's receiver against the agent's /.well-known/jwks.json."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator

import httpx
import jwt
import pytest

from parley.client import AgentKeys, Client, connect
from parley.server import A2AApp, create_app
from parley.server.push import PushRetry, PushSettings
from parley.types import (
    AgentCapabilities,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from tests.push.webhook import Webhook, webhook
from tests.server.agents import ScriptedAgent, card
from tests.servers import listening_socket, running

FAST = PushRetry(first=0.05, longest=0.4, timeout=5.0)
STATES = [TaskState.submitted, TaskState.working, *[TaskState.working] * 5, TaskState.completed]
"""``chunks 5``: the task, working, five artifact chunks, completed: eight updates."""


def _app(retry: PushRetry = FAST) -> A2AApp:
    push_card = card(capabilities=AgentCapabilities(streaming=True, push_notifications=True))
    return create_app(
        ScriptedAgent(), push_card, push=PushSettings(allow=["127.0.0.1/32"], retry=retry)
    )


@pytest.fixture
def agent() -> Iterator[str]:
    with running(_app()) as base:
        yield base


async def _send(base: str, text: str, config: PushNotificationConfig) -> Task:
    async with await connect(base) as client:
        result = await client.send_message(text, push_notification_config=config)
    assert isinstance(result, Task)
    return result


def _chunks(task: Task) -> int:
    return sum(len(artifact.parts) for artifact in task.artifacts or ())


async def test_every_update_arrives_in_order_signed_and_verifiable(agent: str) -> None:
    with webhook(AgentKeys.of_agent(agent)) as (hook, url):
        task = await _send(agent, "chunks 5", PushNotificationConfig(url=url))
        await hook.wait_for(len(STATES))
    assert [t.status.state for t in hook.tasks] == STATES
    assert [_chunks(t) for t in hook.tasks] == [0, 0, 1, 2, 3, 4, 5, 5]
    assert {t.id for t in hook.tasks} == {task.id}
    assert hook.tasks[-1] == task


async def test_the_headers_and_claims_are_as_documented(agent: str) -> None:
    with webhook() as (hook, url):
        config = PushNotificationConfig(url=url, token="tok-1")
        task = await _send(agent, "echo hi", config)
        await hook.wait_for(4)
    async with httpx.AsyncClient() as http:
        keys = (await http.get(f"{agent}/.well-known/jwks.json")).json()
    for received in hook.received:
        assert received.headers["content-type"] == "application/json"
        assert received.headers["x-a2a-notification-token"] == "tok-1"
        scheme, token = received.headers["authorization"].split(" ")
        assert scheme == "Bearer"
        kid = jwt.get_unverified_header(token)["kid"]
        [public] = [k for k in keys["keys"] if k["kid"] == kid]
        claims = jwt.decode(token, jwt.PyJWK(public).key, algorithms=["ES256"], audience=url)
        assert claims["task_id"] == task.id
        assert {"iat", "exp", "jti", "request_body_sha256"} <= claims.keys()
    assert len({r.headers["authorization"] for r in hook.received}) == len(hook.received)


async def test_credentials_of_the_config_go_in_authorization(agent: str) -> None:
    """Spec 6.9: the config's authentication; the JWT then moves to its own header."""
    auth = PushNotificationAuthenticationInfo(schemes=["Bearer"], credentials="webhook-secret")
    with webhook(AgentKeys.of_agent(agent)) as (hook, url):  # verifies the moved JWT
        await _send(agent, "echo hi", PushNotificationConfig(url=url, authentication=auth))
        await hook.wait_for(4)
    with webhook() as (raw, raw_url):  # shows the headers as sent
        await _send(agent, "echo hi", PushNotificationConfig(url=raw_url, authentication=auth))
        await raw.wait_for(4)
    assert raw.received[0].headers["authorization"] == "Bearer webhook-secret"
    assert raw.received[0].headers["x-a2a-notification-jwt"].count(".") == 2
    basic = PushNotificationAuthenticationInfo(schemes=["basic"], credentials="user:pw")
    with webhook() as (raw, raw_url):
        await _send(agent, "echo hi", PushNotificationConfig(url=raw_url, authentication=basic))
        await raw.wait_for(4)
    assert raw.received[0].headers["authorization"] == "Basic dXNlcjpwdw=="


async def test_503_then_200_gets_everything(agent: str) -> None:
    with webhook(AgentKeys.of_agent(agent)) as (hook, url):
        hook.answers = [503, 503, 503]
        await _send(agent, "chunks 5", PushNotificationConfig(url=url))
        await hook.wait_for(len(STATES))
    assert [t.status.state for t in hook.tasks] == STATES
    assert hook.answers == []


async def test_429_with_retry_after_is_honoured(agent: str) -> None:
    with webhook(AgentKeys.of_agent(agent)) as (hook, url):
        hook.answers, hook.retry_after = [429], "1"
        await _send(agent, "echo hi", PushNotificationConfig(url=url))
        await hook.wait_for(4)
    assert [t.status.state for t in hook.tasks][-1] is TaskState.completed


async def test_a_receiver_down_for_a_while_gets_everything_after(
    agent: str, caplog: pytest.LogCaptureFixture
) -> None:
    down = listening_socket()  # the webhook's port, refusing connections until it serves
    url = f"http://127.0.0.1:{down.getsockname()[1]}/hook"
    with caplog.at_level(logging.INFO, logger="parley.push"):
        task = await _send(agent, "chunks 5", PushNotificationConfig(url=url))
        await _wait_for_log(caplog, "ConnectError")  # attempts failed while it was down
        with webhook(AgentKeys.of_agent(agent), sock=down) as (hook, _):
            await hook.wait_for(len(STATES))
    assert [t.status.state for t in hook.tasks] == STATES
    assert hook.tasks[-1] == task


async def _wait_for_log(caplog: pytest.LogCaptureFixture, text: str) -> None:
    for _ in range(600):  # 30 s at most; log records have no event to wait on
        if any(text in record.getMessage() for record in caplog.records):
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"no log record with {text!r}")


async def test_an_undeliverable_notification_dies_at_its_deadline_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with running(_app(PushRetry(first=0.05, longest=0.1, deadline=0.5))) as base:
        with webhook() as (hook, url), caplog.at_level(logging.WARNING, logger="parley.push"):
            hook.answers = [500] * 1000
            await _send(base, "echo hi", PushNotificationConfig(url=url))
            await _wait_for_log(caplog, "is dead after")
        assert hook.received == []
    [dead, *_] = [r for r in caplog.records if "is dead after" in r.getMessage()]
    assert "HTTP 500" in dead.getMessage()


async def test_a_4xx_is_not_retried(agent: str, caplog: pytest.LogCaptureFixture) -> None:
    with webhook() as (hook, url), caplog.at_level(logging.WARNING, logger="parley.push"):
        hook.answers = [404]
        await _send(agent, "echo hi", PushNotificationConfig(url=url))
        await hook.wait_for(3)  # the other three arrive
        await _wait_for_log(caplog, "after 1 attempt(s): HTTP 404")


async def test_several_configs_each_get_every_update(agent: str) -> None:
    async with await connect(agent) as client:
        with webhook(AgentKeys.of_agent(agent)) as (one, url_one), webhook() as (two, url_two):
            task = await _ask(client)
            await _set(client, task.id, "one", url_one)
            await _set(client, task.id, "two", url_two)
            await client.send_message("done", task_id=task.id)
            await one.wait_for(3)
            await two.wait_for(3)
    assert [t.status.state for t in one.tasks] == [
        TaskState.working,
        TaskState.working,
        TaskState.completed,
    ]
    assert len(two.received) == 3


async def _ask(client: Client) -> Task:
    task = await client.send_message("ask")
    assert isinstance(task, Task)
    return task


async def _set(client: Client, task_id: str, config_id: str, url: str) -> None:
    await client.set_push_config(
        TaskPushNotificationConfig(
            task_id=task_id, push_notification_config=PushNotificationConfig(url=url, id=config_id)
        )
    )


async def test_a_hanging_webhook_holds_up_neither_the_agent_nor_other_webhooks(
    agent: str,
) -> None:
    """The agent finishes, and another webhook gets every update, while the first webhook
    has not answered the first notification yet."""
    released = threading.Event()
    with webhook() as (stuck, stuck_url), webhook(AgentKeys.of_agent(agent)) as (free, free_url):
        stuck.held = released
        try:
            async with await connect(agent) as client:
                task = await _ask(client)
                await _set(client, task.id, "stuck", stuck_url)
                await _set(client, task.id, "free", free_url)
                done = await client.send_message("done", task_id=task.id)
            assert isinstance(done, Task)
            assert done.status.state is TaskState.completed
            await free.wait_for(3)
            await asyncio.to_thread(_wait_held, stuck)
            assert stuck.waiting >= 1  # its first notification is still unanswered
            assert stuck.received == []
        finally:
            released.set()
        await stuck.wait_for(3)  # once it answers, the rest follow in order


def _wait_held(hook: Webhook) -> None:
    with hook.changed:
        assert hook.changed.wait_for(lambda: hook.waiting >= 1, 30)


async def test_a_redirect_is_not_followed(agent: str, caplog: pytest.LogCaptureFixture) -> None:
    """The token would travel with it to another host: a 3xx ends the notification."""
    with webhook() as (target, target_url), webhook() as (hook, url):
        hook.redirect_to = target_url
        with caplog.at_level(logging.WARNING, logger="parley.push"):
            await _send(agent, "echo hi", PushNotificationConfig(url=url, token="secret"))
            await _wait_for_log(caplog, "a redirect to")
        assert target.received == []
