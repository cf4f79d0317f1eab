"""The receiver (``parley.client.PushReceiver``): what it accepts and what it refuses
(spec 9 "Push Notification Security": the receiver verifies the notification came from
the agent and is relevant)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from parley.client import AgentKeys, PushNotification, PushReceiver
from parley.server import SigningKeys, create_app
from parley.server.push import notification_headers
from parley.types import PushNotificationConfig, Task, TaskState, TaskStatus
from tests.server.agents import ScriptedAgent, card

HOOK = "https://client.example.com/hook"
TASK = Task(id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.working))
BODY = TASK.to_json()
CONFIG = PushNotificationConfig(url=HOOK, token="secret-token")
AGENT = SigningKeys.generate()


class Inbox:
    def __init__(self) -> None:
        self.notifications: list[PushNotification] = []

    async def __call__(self, notification: PushNotification) -> None:
        self.notifications.append(notification)


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
async def receiver(inbox: Inbox) -> AsyncIterator[httpx.AsyncClient]:
    app = PushReceiver(inbox, AgentKeys(jwks=AGENT.jwks), token="secret-token", audience=HOOK)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="https://client.example.com"
    ) as http:
        yield http


def _headers(body: bytes = BODY, keys: SigningKeys = AGENT) -> dict[str, str]:
    return notification_headers(CONFIG, TASK.id, body, keys)


async def test_a_signed_notification_is_handed_over_once(
    receiver: httpx.AsyncClient, inbox: Inbox
) -> None:
    response = await receiver.post("/hook", content=BODY, headers=_headers())
    assert response.status_code == 200
    [notification] = inbox.notifications
    assert notification.task == TASK
    assert notification.token == "secret-token"
    assert notification.claims["aud"] == HOOK
    assert notification.claims["request_body_sha256"] == hashlib.sha256(BODY).hexdigest()


async def test_a_tampered_body_is_refused(receiver: httpx.AsyncClient, inbox: Inbox) -> None:
    tampered = BODY.replace(b"working", b"completed")
    response = await receiver.post("/hook", content=tampered, headers=_headers())
    assert response.status_code == 401
    assert "request_body_sha256" in response.json()["error"]
    assert inbox.notifications == []


async def test_a_key_that_is_not_the_agents_is_refused(
    receiver: httpx.AsyncClient, inbox: Inbox
) -> None:
    response = await receiver.post(
        "/hook", content=BODY, headers=_headers(keys=SigningKeys.generate())
    )
    assert response.status_code == 401
    assert "no key with kid" in response.json()["error"]
    assert inbox.notifications == []


async def test_a_forged_signature_under_the_agents_kid_is_refused(
    receiver: httpx.AsyncClient, inbox: Inbox
) -> None:
    impostor = SigningKeys(
        [
            SigningKeys.generate().current.__class__(
                AGENT.current.kid, "ES256", SigningKeys.generate().current.private_key
            )
        ]
    )
    response = await receiver.post("/hook", content=BODY, headers=_headers(keys=impostor))
    assert response.status_code == 401
    assert "Signature verification failed" in response.json()["error"]
    assert inbox.notifications == []


async def test_a_replay_is_refused(receiver: httpx.AsyncClient, inbox: Inbox) -> None:
    headers = _headers()
    first = await receiver.post("/hook", content=BODY, headers=headers)
    again = await receiver.post("/hook", content=BODY, headers=headers)
    assert (first.status_code, again.status_code) == (200, 409)
    assert "replay" in again.json()["error"]
    assert len(inbox.notifications) == 1


def _signed(claims: dict[str, object], keys: SigningKeys = AGENT) -> dict[str, str]:
    base: dict[str, object] = {
        "aud": HOOK,
        "jti": "j-1",
        "task_id": TASK.id,
        "request_body_sha256": hashlib.sha256(BODY).hexdigest(),
    }
    return {
        "Authorization": f"Bearer {keys.sign({**base, **claims})}",
        "X-A2A-Notification-Token": "secret-token",
    }


async def test_a_stale_notification_is_refused(receiver: httpx.AsyncClient, inbox: Inbox) -> None:
    issued = int(time.time()) - 3600
    stale = _signed({"iat": issued, "exp": int(time.time()) + 60})
    response = await receiver.post("/hook", content=BODY, headers=stale)
    assert response.status_code == 401
    assert "stale" in response.json()["error"]
    expired = _signed({"iat": issued, "exp": issued + 300, "jti": "j-2"})
    response = await receiver.post("/hook", content=BODY, headers=expired)
    assert response.status_code == 401
    assert "expired" in response.json()["error"]
    assert inbox.notifications == []


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({}, "no JWT"),
        ({"Authorization": "Bearer not-a-jwt"}, "does not check out"),
        ({"Authorization": "Basic dTpw"}, "no JWT"),
    ],
)
async def test_missing_or_broken_jwts_are_refused(
    receiver: httpx.AsyncClient, inbox: Inbox, headers: dict[str, str], reason: str
) -> None:
    response = await receiver.post("/hook", content=BODY, headers=headers)
    assert response.status_code == 401
    assert reason in response.json()["error"]


async def test_a_wrong_token_audience_or_claim_set_is_refused(
    receiver: httpx.AsyncClient, inbox: Inbox
) -> None:
    now = int(time.time())
    wrong_token = {**_headers(), "X-A2A-Notification-Token": "guess"}
    wrong_audience = _signed({"iat": now, "exp": now + 60, "aud": "https://other.example/"})
    no_jti = _signed({"iat": now, "exp": now + 60, "jti": None})
    for headers, status in ((wrong_token, 401), (wrong_audience, 401), (no_jti, 401)):
        response = await receiver.post("/hook", content=BODY, headers=headers)
        assert response.status_code == status, response.text
    assert inbox.notifications == []


async def test_a_body_that_is_not_the_task_the_jwt_names_is_refused(
    receiver: httpx.AsyncClient, inbox: Inbox
) -> None:
    other = TASK.model_copy(update={"id": "t-2"}).to_json()
    response = await receiver.post("/hook", content=other, headers=_headers(body=other))
    assert response.status_code == 401
    not_a_task = b'{"hello": 1}'
    response = await receiver.post("/hook", content=not_a_task, headers=_headers(body=not_a_task))
    assert response.status_code == 400
    assert inbox.notifications == []


async def test_v1_bodies_are_read_or_refused_with_a_reason(
    receiver: httpx.AsyncClient, inbox: Inbox
) -> None:
    """A v1.0 ``StreamResponse`` holding the task is taken; another kind of update, or a
    malformed one, is a 400 that says so in words of the protocol, not of parley's code."""
    v1 = b'{"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}'
    response = await receiver.post("/hook", content=v1, headers=_headers(body=v1))
    assert response.status_code == 200, response.text
    assert [n.task for n in inbox.notifications] == [TASK]
    refused = {
        b'{"statusUpdate": {"taskId": "t-1"}}': "'statusUpdate' notification",
        b'{"task": "t-1"}': "not a Task object",
        b'{"task": {"id": 7, "contextId": "c-1", "status": {}}}': "not a Task",
    }
    for body, reason in refused.items():
        response = await receiver.post("/hook", content=body, headers=_headers(body=body))
        assert response.status_code == 400
        error = response.json()["error"]
        assert reason in error
        assert "Error" not in error  # no exception text
        assert "attribute" not in error
    assert len(inbox.notifications) == 1


async def test_a_get_is_not_a_notification(receiver: httpx.AsyncClient) -> None:
    assert (await receiver.get("/hook")).status_code == 405


async def test_the_receiver_fetches_the_agents_published_keys(inbox: Inbox) -> None:
    """The keys come from the agent's /.well-known/jwks.json, fetched when first needed."""
    app = create_app(ScriptedAgent(), card(), signing_keys=AGENT)
    agent_http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app))
    keys = AgentKeys.of_agent("http://agent.test", http=agent_http)
    receiver = PushReceiver(inbox, keys)
    transport = httpx.ASGITransport(app=receiver)
    async with agent_http, httpx.AsyncClient(transport=transport, base_url="http://r") as http:
        response = await http.post("/", content=BODY, headers=_headers())
    assert response.status_code == 200
    assert [n.task.id for n in inbox.notifications] == [TASK.id]
