"""Push notifications in the 2025-early dialect ("Push Notifications": tasks/pushNotification/
set|get with ``{url, headers}``): the same delivery, signing and SSRF guard as v0.3, the
task in the dialect's own shape in every notification. A real agent on uvicorn posts to
a real webhook on 127.0.0.1 (allowed explicitly)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Iterator

import httpx
import jwt
import pytest

from parley.client import connect
from parley.server import create_app
from parley.server.push import PushRetry, PushSettings
from parley.types import (
    AgentCapabilities,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Task,
    TaskPushNotificationConfig,
)
from tests.dialects.early import (
    EarlyAgent,
    call,
    early_card,
    has_no_v0_3_member,
    request,
    send_params,
)
from tests.push.webhook import webhook
from tests.servers import running

FAST = PushRetry(first=0.05, longest=0.4, timeout=5.0)
SESSION = "push-session"


@pytest.fixture(scope="module")
def agent() -> Iterator[str]:
    card = early_card().model_copy(
        update={"capabilities": AgentCapabilities(streaming=True, push_notifications=True)}
    )
    app = create_app(EarlyAgent(), card, push=PushSettings(allow=["127.0.0.1/32"], retry=FAST))
    with running(app) as base:
        yield base


@pytest.fixture
async def http(agent: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=agent, timeout=30) as client:
        yield client


async def test_set_get_and_the_notifications_in_2025_early_shapes(
    agent: str, http: httpx.AsyncClient
) -> None:
    """set answers {url, headers}; get gives them back, every one; the rest of the task's
    updates reach the webhook as 2025-early Tasks, with every header asked for (the
    Authorization one too) and the agent's signed JWT."""
    asked = await call(http, request("tasks/send", send_params("push-1", "ask", SESSION)))
    assert asked["result"]["status"]["state"] == "input-required"
    with webhook() as (hook, url):
        headers = {"Authorization": "Bearer webhook-secret", "X-Tenant": "acme", "X-Tag": "7"}
        push = {"id": "push-1", "sessionId": SESSION, "url": url, "headers": headers}
        set_answer = await call(http, request("tasks/pushNotification/set", push, 7))
        assert set_answer == {"jsonrpc": "2.0", "id": 7, "result": {"url": url, "headers": headers}}
        query = {"id": "push-1", "sessionId": SESSION}
        get_answer = await call(http, request("tasks/pushNotification/get", query, 6))
        assert get_answer == {"jsonrpc": "2.0", "id": 6, "result": {"url": url, "headers": headers}}
        done = await call(http, request("tasks/send", send_params("push-1", "Oslo", SESSION)))
        assert done["result"]["status"]["state"] == "completed"
        await hook.wait_for(3)  # working, the artifact, completed
    keys = (await http.get("/.well-known/jwks.json")).json()
    tasks = [json.loads(received.body) for received in hook.received]
    assert [task["status"]["state"] for task in tasks][-1] == "completed"
    for task in tasks:
        assert task["id"] == "push-1"
        assert task["sessionId"] == SESSION
        assert has_no_v0_3_member(task), task
    assert tasks[-1]["artifacts"][0] == {
        "name": "answer",
        "parts": [{"type": "text", "text": "You said: Oslo"}],
        "index": 0,
    }
    for received in hook.received:
        assert received.headers["authorization"] == "Bearer webhook-secret"
        assert (received.headers["x-tenant"], received.headers["x-tag"]) == ("acme", "7")
        token = received.headers["x-a2a-notification-jwt"]
        kid = jwt.get_unverified_header(token)["kid"]
        [public] = [k for k in keys["keys"] if k["kid"] == kid]
        claims = jwt.decode(token, jwt.PyJWK(public).key, algorithms=["ES256"], audience=url)
        assert claims["task_id"] == "push-1"
        assert claims["request_body_sha256"] == hashlib.sha256(received.body).hexdigest()


async def test_the_guard_refuses_a_private_address(http: httpx.AsyncClient) -> None:
    """The same SSRF guard: a webhook on a private address not allowed is -32602."""
    await call(http, request("tasks/send", send_params("push-2", "ask", SESSION)))
    push = {"id": "push-2", "sessionId": SESSION, "url": "http://10.1.2.3/hook", "headers": {}}
    answer = await call(http, request("tasks/pushNotification/set", push))
    assert answer["error"]["code"] == -32602


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Bad": "one\r\nX-Injected: two"},
        {"Bad Name": "x"},
        {f"X-{n}": "x" for n in range(33)},
        {"X-Long": "x" * 4097},
    ],
    ids=["line-break", "name", "too-many", "too-long"],
)
async def test_headers_http_cannot_carry_are_refused(
    http: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    """Headers are sent as given: ones that are not HTTP header fields, or too many or
    too large, are -32602 naming the problem, and nothing is stored."""
    await call(http, request("tasks/send", send_params("push-5", "ask", SESSION)))
    url = "https://example.org/hook"
    push = {"id": "push-5", "sessionId": SESSION, "url": url, "headers": headers}
    answer = await call(http, request("tasks/pushNotification/set", push))
    assert answer["error"]["code"] == -32602
    assert "headers" in answer["error"]["message"]
    query = {"id": "push-5", "sessionId": SESSION}
    assert "error" in await call(http, request("tasks/pushNotification/get", query))


async def test_push_for_an_unknown_task_or_session(http: httpx.AsyncClient) -> None:
    push = {"id": "no-task", "sessionId": SESSION, "url": "https://example.org/h", "headers": {}}
    answer = await call(http, request("tasks/pushNotification/set", push))
    assert answer["error"]["code"] == -32001
    await call(http, request("tasks/send", send_params("push-3", "ask", SESSION)))
    other = {**push, "id": "push-3", "sessionId": "another-session"}
    answer = await call(http, request("tasks/pushNotification/get", other))
    assert answer["error"]["code"] == -32002


async def test_a_v0_3_config_of_the_same_task_keeps_v0_3_payloads(
    http: httpx.AsyncClient,
) -> None:
    """Each config gets its own dialect: a v0.3 client's config on the same task is sent
    the v0.3 Task, the 2025-early client's config the 2025-early Task."""
    await call(http, request("tasks/send", send_params("push-4", "ask", SESSION)))
    with webhook() as (early_hook, early_url), webhook() as (v03_hook, v03_url):
        early = {"id": "push-4", "sessionId": SESSION, "url": early_url, "headers": {}}
        assert "result" in await call(http, request("tasks/pushNotification/set", early))
        v03 = {"taskId": "push-4", "pushNotificationConfig": {"url": v03_url, "id": "mine"}}
        assert "result" in await call(http, request("tasks/pushNotificationConfig/set", v03))
        await call(http, request("tasks/send", send_params("push-4", "Rome", SESSION)))
        await early_hook.wait_for(3)
        await v03_hook.wait_for(3)
    assert all("kind" not in json.loads(r.body) for r in early_hook.received)
    assert all(json.loads(r.body)["kind"] == "task" for r in v03_hook.received)


async def test_parleys_client_sets_and_gets_push_in_the_dialect(agent: str) -> None:
    auth = PushNotificationAuthenticationInfo(schemes=["Bearer"], credentials="s3cret")
    with webhook() as (hook, url):
        async with connect(agent, protocol="2025-early") as client:
            task = await client.send_message("ask")
            assert isinstance(task, Task)
            config = PushNotificationConfig(url=url, authentication=auth)
            wanted = TaskPushNotificationConfig(task_id=task.id, push_notification_config=config)
            stored = await client.set_push_config(wanted)
            found = await client.get_push_config(task.id)
            await client.send_message("Lima", task_id=task.id)
            await hook.wait_for(3)
    for answer in (stored, found):
        assert answer.task_id == task.id
        assert answer.push_notification_config.url == url
        assert answer.push_notification_config.authentication == auth
    assert hook.received[-1].headers["authorization"] == "Bearer s3cret"
    assert json.loads(hook.received[-1].body)["status"]["state"] == "completed"
