"""Media types on the HTTP bindings: bodies that are not declared JSON are refused with
415 on every POST route of both versions (docs/security.md: a cross-site form never
starts or cancels a task), and v1.0's HTTP+JSON answers ``application/a2a+json``
(v1.0.1 §11.1) while taking either JSON type."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.bindings.conftest import Served

V1 = {"A2A-Version": "1.0"}
V1_SEND = {"message": {"messageId": "m-v1", "role": "ROLE_USER", "parts": [{"text": "echo"}]}}
V03_SEND = {"message": {"messageId": "m-v03", "role": "ROLE_USER", "content": [{"text": "echo"}]}}
NOT_JSON = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]

# (path, version header, body): every POST route, v1.0 with and without a tenant
POSTS = [
    ("/message:send", {}, V1_SEND),
    ("/message:send", V1, V1_SEND),
    ("/acme/message:send", V1, V1_SEND),
    ("/message:stream", V1, V1_SEND),
    ("/tasks/t-1:cancel", V1, {}),
    ("/acme/tasks/t-1:cancel", V1, {"metadata": {}}),
    ("/v1/message:send", {}, V03_SEND),
    ("/v1/message:stream", {}, V03_SEND),
    ("/v1/tasks/t-1:cancel", {}, {"name": "tasks/t-1"}),
]


@pytest.mark.parametrize("content_type", NOT_JSON)
@pytest.mark.parametrize(("path", "version", "body"), POSTS)
async def test_post_bodies_not_declared_json_are_refused(
    served: Served, path: str, version: dict[str, str], body: object, content_type: str | None
) -> None:
    headers = {**version, **({"content-type": content_type} if content_type else {})}
    async with httpx.AsyncClient(base_url=served.base) as http:
        before = await _task_count(http)
        answer = await http.post(path, content=json.dumps(body), headers=headers)
        assert answer.status_code == 415, answer.text
        assert "application/json" in answer.text
        assert await _task_count(http) == before


@pytest.mark.parametrize("path", ["/tasks/t-1:cancel", "/v1/tasks/t-1:cancel"])
async def test_an_empty_form_cannot_cancel(served: Served, path: str) -> None:
    """A ``text/plain`` form with no fields posts an empty body: still refused."""
    headers = {"content-type": "text/plain"}
    async with httpx.AsyncClient(base_url=served.base) as http:
        answer = await http.post(path, content=b"", headers=headers)
        bare = await http.post(path)  # no body, no type: a cancel with nothing to say
    assert answer.status_code == 415
    assert bare.status_code == 404, bare.text  # served: the task is not there


@pytest.mark.parametrize("media_type", ["application/json", "application/a2a+json; charset=utf-8"])
async def test_v1_rest_answers_a2a_json(served: Served, media_type: str) -> None:
    headers = {**V1, "content-type": media_type}
    async with httpx.AsyncClient(base_url=served.base) as http:
        sent = await http.post("/message:send", content=json.dumps(V1_SEND), headers=headers)
        missing = await http.get("/tasks/no-such-task", headers=V1)
        wrong_method = await http.delete("/message:send", headers=V1)
        v03 = await http.post(
            "/v1/message:send", content=json.dumps(V03_SEND), headers={"content-type": media_type}
        )
    assert sent.status_code == 200, sent.text
    assert sent.headers["content-type"] == "application/a2a+json"
    assert sent.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/a2a+json"
    assert wrong_method.status_code == 405
    assert wrong_method.headers["content-type"] == "application/a2a+json"
    assert v03.status_code == 200  # v0.3 answers as the v0.3 SDKs expect
    assert v03.headers["content-type"] == "application/json"


async def test_v1_rest_stream_stays_an_event_stream(served: Served) -> None:
    headers = {**V1, "content-type": "application/a2a+json"}
    async with httpx.AsyncClient(base_url=served.base) as http:
        answer = await http.post("/message:stream", content=json.dumps(V1_SEND), headers=headers)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/event-stream"


async def _task_count(http: httpx.AsyncClient) -> int:
    listed = await http.get("/tasks", params={"pageSize": 100}, headers=V1)
    return int(listed.json()["totalSize"])


async def test_refusals_before_the_binding_answer_in_its_media_type() -> None:
    """A caller the authentication layer refuses gets the error of the version it asked
    for, in that version's media type."""
    from parley.server import APIKeyVerifier, create_app
    from parley.types import APIKeySecurityScheme
    from tests.server.agents import ScriptedAgent, card

    secured = card(
        security_schemes={"apiKey": APIKeySecurityScheme(name="X-API-Key", in_="header")},
        security=[{"apiKey": []}],
    )
    app = create_app(ScriptedAgent(), secured, security={"apiKey": APIKeyVerifier({"a": "k"})})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        v1 = await http.get("/tasks/t-1", headers=V1)
        v03 = await http.get("/v1/tasks/t-1")
    assert v1.status_code == v03.status_code == 401
    assert v1.headers["content-type"] == "application/a2a+json"
    assert v1.json()["error"]["status"] == "UNAUTHENTICATED"
    assert v03.headers["content-type"] == "application/json"
    assert v03.json()["code"] == -31401
