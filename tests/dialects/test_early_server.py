"""Every request and response example of the 2025-early dialect, over real HTTP, with the
exact shapes ("API Methods", "Data Structures", "Error Handling" of that document)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from parley.client import TaskTracker, connect
from parley.server import create_app
from parley.types import AgentCardSignature, Task, TaskState
from tests.dialects.early import (
    EarlyAgent,
    call,
    early_app,
    early_card,
    has_no_v0_3_member,
    request,
    secured_card,
    send_params,
    stream,
    text_message,
    without_timestamps,
)
from tests.servers import running

EARLY_CARD = {
    "name": "Early agent",
    "description": "Answers as the 2025-early specification shows.",
    "provider": {"organization": "Example Org", "url": "https://example.org"},
    "version": "1.2.3",
    "documentationUrl": "https://example.org/docs",
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "stateTransitionHistory": False,
    },
    "authentication": {"schemes": []},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [
        {
            "id": "echo",
            "name": "Echo",
            "description": "Says what you said.",
            "tags": ["demo"],
            "examples": ["hello"],
            "inputModes": ["text/plain"],
            "outputModes": ["text/plain"],
        }
    ],
}


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, EarlyAgent]]:
    app, agent = early_app()
    with running(app) as url:
        yield url, agent


@pytest.fixture
async def http(served: tuple[str, EarlyAgent]) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served[0], timeout=30) as client:
        yield client


def completed_task(task_id: str, text: str, session: str = "session-1") -> dict[str, Any]:
    """The Task of the 2025-early "Task" structure for a finished echo of ``text``."""
    return {
        "id": task_id,
        "sessionId": session,
        "status": {"state": "completed"},
        "artifacts": [
            {"name": "answer", "parts": [{"type": "text", "text": f"You said: {text}"}], "index": 0}
        ],
        "history": [text_message(text), text_message("Working on it", "agent")],
    }


async def test_agent_get_card(http: httpx.AsyncClient, served: tuple[str, EarlyAgent]) -> None:
    """Agent Discovery, agent/getCard: the card in the "Agent Card" structure."""
    answer = await call(http, request("agent/getCard", {}, 1))
    assert answer["id"] == 1
    assert answer["result"] == {**EARLY_CARD, "url": served[0] + "/"}


async def test_card_authentication_names_the_schemes() -> None:
    """Authentication and Security: `"authentication": {"schemes": ["bearer"]}`."""
    from parley.server import TokenVerifier, create_app

    async def token(value: str) -> str | None:
        return "caller" if value == "t0k" else None

    app = create_app(EarlyAgent(), secured_card(), security={"token": TokenVerifier(token)})
    with running(app) as url:
        bearer = {"Authorization": "Bearer t0k"}  # the JSON-RPC endpoint is authenticated
        async with httpx.AsyncClient(base_url=url, headers=bearer) as http:
            card = (await call(http, request("agent/getCard", {}, 1)))["result"]
            well_known = (await http.get("/.well-known/agent.json")).json()
    assert card["authentication"] == {"schemes": ["bearer"]}
    assert well_known["authentication"] == {"schemes": ["bearer"]}


async def test_well_known_agent_json_reads_as_both_cards(
    http: httpx.AsyncClient, served: tuple[str, EarlyAgent]
) -> None:
    """The card at /.well-known/agent.json holds every member of 2025-early's card, with the
    same values, beside the v0.3 card's (docs/dialect-2025-early.md, "The agent card")."""
    card = (await http.get("/.well-known/agent.json")).json()
    for name, value in {**EARLY_CARD, "url": served[0] + "/"}.items():
        if name == "capabilities":
            assert {k: card[name].get(k, False) for k in value} == value
        else:
            assert card[name] == value, name
    assert card["protocolVersion"] == "0.3.0"
    current = (await http.get("/.well-known/agent-card.json")).json()
    assert "authentication" not in current
    assert {k: v for k, v in card.items() if k != "authentication"} == current


async def test_tasks_send_with_the_client_chosen_id(
    http: httpx.AsyncClient, served: tuple[str, EarlyAgent]
) -> None:
    """Task Management, tasks/send: the task is created with the id the client sent, in
    its session; acceptedOutputModes reaches the agent as v0.3's configuration does."""
    params = send_params("task-send-1", "hello", acceptedOutputModes=["text/plain"])
    answer = await call(http, request("tasks/send", params, 2))
    assert answer["id"] == 2
    assert without_timestamps(answer["result"]) == completed_task("task-send-1", "hello")
    assert served[1].accepted[-1] == ["text/plain"]


async def test_tasks_send_continues_a_task_waiting_for_input(http: httpx.AsyncClient) -> None:
    """Task Lifecycle: input-required -> working after receiving input, same task id."""
    first = await call(http, request("tasks/send", send_params("task-turns", "ask")))
    status = without_timestamps(first["result"]["status"])
    assert status == {"state": "input-required", "message": text_message("Which city?", "agent")}
    second = await call(http, request("tasks/send", send_params("task-turns", "Helsinki")))
    task = without_timestamps(second["result"])
    assert task["id"] == "task-turns"
    assert task["status"] == {"state": "completed"}
    assert task["history"] == [
        text_message("ask"),
        text_message("Which city?", "agent"),
        text_message("Helsinki"),
        text_message("Working on it", "agent"),
    ]


async def test_tasks_send_subscribe_streams_the_example_events(http: httpx.AsyncClient) -> None:
    """tasks/sendSubscribe: status (working, with a message, final false), artifact
    (index 0, append false), status (completed, final true), each in a JSON-RPC
    response with the request's id."""
    events = await stream(http, request("tasks/sendSubscribe", send_params("task-sub", "hi"), 3))
    assert all(event["jsonrpc"] == "2.0" and event["id"] == 3 for event in events)
    results = [without_timestamps(event["result"]) for event in events]
    assert results == [
        {"id": "task-sub", "status": {"state": "created"}, "final": False},
        {
            "id": "task-sub",
            "status": {"state": "working", "message": text_message("Working on it", "agent")},
            "final": False,
        },
        {
            "id": "task-sub",
            "artifact": {
                "name": "answer",
                "parts": [{"type": "text", "text": "You said: hi"}],
                "index": 0,
                "append": False,
            },
        },
        {"id": "task-sub", "status": {"state": "completed"}, "final": True},
    ]


async def test_tasks_get(http: httpx.AsyncClient) -> None:
    """tasks/get with id and sessionId: the Task structure."""
    await call(http, request("tasks/send", send_params("task-get", "again")))
    answer = await call(http, request("tasks/get", {"id": "task-get", "sessionId": "session-1"}, 4))
    assert answer["id"] == 4
    assert without_timestamps(answer["result"]) == completed_task("task-get", "again")
    trimmed = await call(
        http, request("tasks/get", {"id": "task-get", "sessionId": "session-1", "historyLength": 1})
    )
    assert trimmed["result"]["history"] == [text_message("Working on it", "agent")]


async def test_tasks_cancel(http: httpx.AsyncClient) -> None:
    """tasks/cancel: the Task structure with state "canceled"."""
    body = request("tasks/sendSubscribe", send_params("task-cancel", "wait"))
    streaming = asyncio.create_task(stream(http, body))
    for _ in range(500):
        found = await call(
            http, request("tasks/get", {"id": "task-cancel", "sessionId": "session-1"})
        )
        if "result" in found and found["result"]["status"]["state"] == "working":
            break
        await asyncio.sleep(0.01)
    answer = await call(
        http, request("tasks/cancel", {"id": "task-cancel", "sessionId": "session-1"}, 5)
    )
    assert answer["id"] == 5
    task = answer["result"]
    assert task["id"] == "task-cancel"
    assert task["sessionId"] == "session-1"
    assert task["status"]["state"] == "canceled"
    assert has_no_v0_3_member(task)
    events = await asyncio.wait_for(streaming, 30)
    assert events[-1]["result"]["status"]["state"] == "canceled"
    assert events[-1]["result"]["final"] is True


@pytest.mark.parametrize(
    ("method", "params", "request_id"),
    [
        ("tasks/pushNotification/get", {"id": "task-get", "sessionId": "session-1"}, 6),
        (
            "tasks/pushNotification/set",
            {
                "id": "task-get",
                "sessionId": "session-1",
                "url": "https://example.org/cb",
                "headers": {},
            },
            7,
        ),
    ],
)
async def test_push_notification_methods_say_not_supported(
    http: httpx.AsyncClient, method: str, params: dict[str, Any], request_id: int
) -> None:
    """Push Notifications: -32003 "Push notification not supported" until parley serves
    them (the agent's card says pushNotifications: false)."""
    answer = await call(http, request(method, params, request_id))
    assert answer["id"] == request_id
    assert answer["error"]["code"] == -32003
    assert "result" not in answer


async def test_file_and_data_parts_travel(http: httpx.AsyncClient) -> None:
    """Message Parts: file (bytes) and data parts are accepted; the history keeps them."""
    message = {
        "role": "user",
        "parts": [
            {"type": "text", "text": "files"},
            {"type": "file", "file": {"name": "a.txt", "mimeType": "text/plain", "bytes": "aGk="}},
            {"type": "data", "data": {"k": 1}, "metadata": {"m": True}},
        ],
    }
    answer = await call(http, request("tasks/send", {"id": "task-parts", "message": message}))
    task = answer["result"]
    assert task["history"][0] == message
    assert isinstance(task["sessionId"], str)
    assert task["sessionId"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {', -32700),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "tasks/send", "params": {}}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/unknown", "params": {}}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send"}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": [1]}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"id": "x"}}', -32602),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"id": "x", '
            b'"message": {"role": "user", "parts": []}}}',
            -32602,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"id": "x", '
            b'"message": {"role": "robot", "parts": [{"type": "text", "text": "a"}]}}}',
            -32602,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"id": "x", '
            b'"message": {"role": "user", "parts": [{"kind": "text", "text": "a"}]}}}',
            -32602,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"id": "x", '
            b'"message": {"role": "user", "parts": [{"type": "file", "file": {"name": "f"}}]}}}',
            -32602,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"sessionId": "s"}}',
            -32602,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", '
            b'"params": {"id": 3, "sessionId": "s"}}',
            -32602,
        ),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "agent/getCard", "params": [1]}', -32602),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotification/set", '
            b'"params": {"id": "x", "sessionId": "s"}}',
            -32602,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", '
            b'"params": {"id": "nope", "sessionId": "s"}}',
            -32001,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel", '
            b'"params": {"id": "nope", "sessionId": "s"}}',
            -32001,
        ),
    ],
)
async def test_malformed_requests_get_the_dialect_errors(
    http: httpx.AsyncClient, body: bytes, code: int
) -> None:
    """Error Handling: each malformed request gets its code from the table, HTTP 200 and
    a JSON-RPC error, never a 500."""
    answer = await call(http, body)
    assert answer["error"]["code"] == code, answer
    assert isinstance(answer["error"]["message"], str)
    assert answer["error"]["message"]
    assert "result" not in answer


async def test_a_task_in_another_session_is_session_not_found(http: httpx.AsyncClient) -> None:
    """Error Handling: -32002 Session not found, for get, cancel and send alike."""
    await call(http, request("tasks/send", send_params("task-session", "mine", "session-a")))
    for method, params in [
        ("tasks/get", {"id": "task-session", "sessionId": "session-b"}),
        ("tasks/cancel", {"id": "task-session", "sessionId": "session-b"}),
        ("tasks/send", send_params("task-session", "yours", "session-b")),
    ]:
        answer = await call(http, request(method, params))
        assert answer["error"]["code"] == -32002, (method, answer)
    found = await call(http, request("tasks/get", {"id": "task-session", "sessionId": "session-a"}))
    assert found["result"]["status"]["state"] == "completed"


async def test_cancel_of_a_finished_task_is_a_server_error(http: httpx.AsyncClient) -> None:
    """v0.3's TaskNotCancelable (-32002) would read as "Session not found" here: it is the
    generic server error -32000 with its message."""
    await call(http, request("tasks/send", send_params("task-done", "done")))
    answer = await call(
        http, request("tasks/cancel", {"id": "task-done", "sessionId": "session-1"})
    )
    assert answer["error"]["code"] == -32000
    assert "canceled" in answer["error"]["message"]


async def test_a_finished_task_takes_no_more_messages(http: httpx.AsyncClient) -> None:
    await call(http, request("tasks/send", send_params("task-over", "one")))
    answer = await call(http, request("tasks/send", send_params("task-over", "two")))
    assert answer["error"]["code"] == -32602
    assert "terminal" in answer["error"]["message"]


async def test_stream_errors_are_one_sse_event(http: httpx.AsyncClient) -> None:
    """A streaming method always answers with SSE: invalid params are its one event."""
    events = await stream(http, request("tasks/sendSubscribe", {"id": "x"}, 9))
    assert len(events) == 1
    assert events[0]["id"] == 9
    assert events[0]["error"]["code"] == -32602


async def test_resubscribe_to_a_finished_task(http: httpx.AsyncClient) -> None:
    """tasks/resubscribe (not in the dialect's document; agents of its generation had it):
    the task's current status as one final event."""
    await call(http, request("tasks/send", send_params("task-resub", "x")))
    events = await stream(
        http, request("tasks/resubscribe", {"id": "task-resub", "sessionId": None})
    )
    assert [without_timestamps(e["result"]) for e in events] == [
        {"id": "task-resub", "status": {"state": "completed"}, "final": True}
    ]


async def test_a_task_created_in_one_dialect_reads_in_the_other(http: httpx.AsyncClient) -> None:
    """docs/dialect-2025-early.md: one core, so a v0.3 request sees the same task."""
    await call(http, request("tasks/send", send_params("task-both", "both")))
    v03 = await call(http, request("tasks/get", {"id": "task-both"}))
    task = v03["result"]
    assert task["kind"] == "task"
    assert task["contextId"] == "session-1"
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "You said: both"}]


async def test_a_continued_stream_numbers_new_artifacts_after_the_old(
    http: httpx.AsyncClient,
) -> None:
    """An artifact's index is its place among the task's artifacts: the second turn's
    artifact is index 1, and the stream of that turn says so."""
    first = await call(http, request("tasks/send", send_params("task-draft", "draft")))
    assert [a["index"] for a in first["result"]["artifacts"]] == [0]
    events = await stream(
        http, request("tasks/sendSubscribe", send_params("task-draft", "yes, go on"))
    )
    results = [without_timestamps(event["result"]) for event in events]
    assert results[0] == {
        "id": "task-draft",
        "status": {"state": "working", "message": text_message("Working on it", "agent")},
        "final": False,
    }
    [artifact] = [result["artifact"] for result in results if "artifact" in result]
    assert artifact["index"] == 1
    assert artifact["name"] == "answer"
    task = await call(http, request("tasks/get", {"id": "task-draft", "sessionId": "session-1"}))
    assert [(a["index"], a["name"]) for a in task["result"]["artifacts"]] == [
        (0, "draft"),
        (1, "answer"),
    ]


async def test_parleys_client_streams_a_second_turn_without_a_made_up_task(
    served: tuple[str, EarlyAgent],
) -> None:
    """A v0.3 stream that continues a task opens with its first update, not a Task; the
    client's stream in this dialect does the same, so a tracker keeps the first turn's
    artifacts."""
    tracker = TaskTracker()
    async with connect(served[0], protocol="2025-early") as client:
        async for _ in tracker.follow(client.stream_message("draft")):
            pass
        assert tracker.task is not None
        task_id = tracker.task.id
        second = [
            event async for event in tracker.follow(client.stream_message("fine", task_id=task_id))
        ]
    assert not isinstance(second[0], Task)
    assert tracker.task is not None
    assert [a.name for a in tracker.task.artifacts or ()] == ["draft", "answer"]
    assert tracker.state == TaskState.completed


async def test_a_signed_card_is_served_as_signed_at_agent_json() -> None:
    """A member added to a signed card would break its signature (v0.3 5.5.6): the
    well-known agent.json serves it exactly as agent-card.json does."""
    signature = AgentCardSignature(protected="eyJhbGciOiJFUzI1NiJ9", signature="c2ln")
    signed = early_card().model_copy(update={"signatures": [signature]})
    with running(create_app(EarlyAgent(), signed)) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            old = (await http.get("/.well-known/agent.json")).content
            current = (await http.get("/.well-known/agent-card.json")).content
    assert old == current
    assert b"authentication" not in old
