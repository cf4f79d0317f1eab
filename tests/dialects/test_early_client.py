"""parley's client speaking the 2025-early dialect to an agent that knows nothing else (a
Starlette app answering as the 2025-early specification describes), over real HTTP: the
same ``Client`` methods and core types as with v0.3 (docs/dialect-2025-early.md, "The
client")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from parley.client import (
    ClientError,
    TaskTracker,
    connect,
    text_of,
    user_message,
)
from parley.demo import ASK_DETAILS, create_demo_app
from parley.protocol import (
    PushNotificationNotSupportedError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.protocol.early import SessionNotFoundError
from parley.types import (
    PushNotificationConfig,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from tests.cli.conftest import parley
from tests.dialects.early_peer import EarlyPeer
from tests.servers import running


@pytest.fixture(scope="module")
def peer() -> Iterator[tuple[str, EarlyPeer]]:
    server = EarlyPeer()
    with running(server.app) as url:
        yield url, server


def early_client(url: str) -> connect:
    return connect(url, protocol="2025-early")


async def test_the_card_comes_from_agent_json(peer: tuple[str, EarlyPeer]) -> None:
    """Agent Card: read in the dialect's shape; `authentication.schemes: ["bearer"]`
    becomes an HTTP bearer scheme the client's credentials can use."""
    url, _ = peer
    async with early_client(url) as client:
        card = client.card
    assert card is not None
    assert card.name == "Old agent"
    assert card.url == url + "/"
    assert card.capabilities.streaming is True
    assert [skill.id for skill in card.skills] == ["echo"]
    assert card.provider is not None
    assert card.provider.organization == "Old Org"
    assert card.security == [{"bearer": []}]
    assert card.security_schemes is not None
    assert card.security_schemes["bearer"].type == "http"


async def test_send_message_creates_the_task_with_the_clients_id(
    peer: tuple[str, EarlyPeer],
) -> None:
    """tasks/send: the client names the task and its session; the answer is a core Task."""
    url, server = peer
    async with early_client(url) as client:
        task = await client.send_message("hello", context_id="my-session")
    assert isinstance(task, Task)
    assert task.status.state == TaskState.completed
    assert task.context_id == "my-session"
    assert text_of(task) == "Echo: hello"
    sent = server.seen[-1]
    assert sent["method"] == "tasks/send"
    assert sent["params"]["id"] == task.id
    assert sent["params"]["sessionId"] == "my-session"
    assert sent["params"]["message"] == {
        "role": "user",
        "parts": [{"type": "text", "text": "hello"}],
    }


async def test_multi_turn_continues_the_same_task(peer: tuple[str, EarlyPeer]) -> None:
    """Task Lifecycle: input-required, then the answer to the same task id completes it."""
    url, server = peer
    async with early_client(url) as client:
        asked = await client.send_message("ask")
        assert isinstance(asked, Task)
        assert asked.status.state == TaskState.input_required
        assert asked.status.message is not None
        assert text_of(asked.status.message) == "Which city?"
        done = await client.send_message("Helsinki", task_id=asked.id)
    assert isinstance(done, Task)
    assert done.id == asked.id
    assert done.status.state == TaskState.completed
    assert text_of(done) == "Booked to Helsinki"
    assert server.seen[-1]["params"]["sessionId"] == asked.context_id


async def test_stream_message_gives_core_events(peer: tuple[str, EarlyPeer]) -> None:
    """tasks/sendSubscribe: the stream opens with a core Task (as a v0.3 stream does),
    then the status and artifact events; a tracker folds them into the task."""
    url, server = peer
    tracker = TaskTracker()
    async with early_client(url) as client:
        events = [event async for event in tracker.follow(client.stream_message("stream me"))]
    assert [type(event) for event in events] == [
        Task,
        TaskArtifactUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]
    first = events[0]
    assert isinstance(first, Task)
    assert first.status.state == TaskState.working
    chunk = events[2]
    assert isinstance(chunk, TaskArtifactUpdateEvent)
    assert chunk.append is True
    assert chunk.last_chunk is True
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.final is True
    assert tracker.task is not None
    assert tracker.state == TaskState.completed
    assert text_of(tracker.task) == "one two"
    assert server.seen[-1]["method"] == "tasks/sendSubscribe"


async def test_get_and_cancel(peer: tuple[str, EarlyPeer]) -> None:
    url, server = peer
    async with early_client(url) as client:
        started = await client.send_message("slow")
        assert isinstance(started, Task)
        found = await client.get_task(started.id, history_length=3)
        canceled = await client.cancel_task(started.id)
    assert found.status.state == TaskState.working
    assert canceled.status.state == TaskState.canceled
    methods = [body["method"] for body in server.seen[-2:]]
    assert methods == ["tasks/get", "tasks/cancel"]
    assert server.seen[-2]["params"] == {
        "id": started.id,
        "sessionId": started.context_id,
        "historyLength": 3,
    }


async def test_errors_become_the_core_error_classes(peer: tuple[str, EarlyPeer]) -> None:
    """Error Handling: -32001, -32002, -32003 as parley's error classes."""
    url, _ = peer
    async with early_client(url) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task("no-such-task")
        task = await client.send_message("hi", context_id="session-x")
        assert isinstance(task, Task)
        client.transport.dialect.sessions[task.id] = "session-y"  # type: ignore[attr-defined]
        with pytest.raises(SessionNotFoundError):
            await client.get_task(task.id)
        config = TaskPushNotificationConfig(
            task_id=task.id,
            push_notification_config=PushNotificationConfig(url="https://example.org/hook"),
        )
        with pytest.raises(PushNotificationNotSupportedError):
            await client.set_push_config(config)


async def test_what_the_dialect_cannot_say_is_refused_before_sending(
    peer: tuple[str, EarlyPeer],
) -> None:
    url, server = peer
    async with early_client(url) as client:
        before = len(server.seen)
        with pytest.raises(UnsupportedOperationError):
            await client.list_push_configs("t")
        with pytest.raises(UnsupportedOperationError):
            await client.get_extended_card()
        with pytest.raises(UnsupportedOperationError):
            await client.send_message("hi", blocking=False)
    assert len(server.seen) == before


async def test_an_unknown_protocol_is_refused(peer: tuple[str, EarlyPeer]) -> None:
    with pytest.raises(ClientError, match="2025-late"):
        await connect(peer[0], protocol="2025-late")


def test_the_cli_speaks_the_dialect(peer: tuple[str, EarlyPeer]) -> None:
    """`parley card|send|get --protocol 2025-early` against the old agent."""
    url, _ = peer
    card = parley("card", url, "--protocol", "2025-early")
    assert card.returncode == 0, card.stderr
    assert "Old agent" in card.stdout
    sent = parley("send", url, "hello there", "--protocol", "2025-early", "--json")
    assert sent.returncode == 0, sent.stderr
    task = Task.model_validate_json(sent.stdout)
    assert text_of(task) == "Echo: hello there"
    got = parley("get", url, task.id, "--protocol", "2025-early")
    assert got.returncode == 0, got.stderr
    assert "completed" in got.stdout
    wrong = parley("send", url, "x", "--protocol", "9.9")
    assert wrong.returncode == 2
    assert "--protocol" in wrong.stderr


async def test_a_retried_message_names_the_same_task(peer: tuple[str, EarlyPeer]) -> None:
    """The id of a new task is derived from its first message's id: sending the same
    message again (a retry after a lost answer) reaches the same task."""
    url, server = peer
    message = user_message("slow")
    async with early_client(url) as client:
        first = await client.send_message(message)
        again = await client.send_message(message)
    assert isinstance(first, Task)
    assert isinstance(again, Task)
    assert first.id == again.id
    assert [body["params"]["id"] for body in server.seen[-2:]] == [first.id, first.id]


def test_chat_books_a_flight_in_the_dialect() -> None:
    """`parley chat --protocol 2025-early` with the demo agent: the flight booking's turns
    go to one task through tasks/sendSubscribe, as with v0.3."""
    lines = ["book a flight", "from Berlin to Helsinki on 2025-06-01", "yes"]
    with running(create_demo_app()) as url:
        result = parley("chat", url, "--protocol", "2025-early", stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(ASK_DETAILS) == 1
    assert result.stdout.count("input-required: ") == 2  # details, then consent: once each
    assert "│ to           │ Helsinki" in result.stdout
    task_lines = [line for line in result.stdout.splitlines() if line.startswith("task ")]
    assert len({line.split()[1] for line in task_lines}) == 1
    assert task_lines[-1].split()[-1] == "completed"
