"""Every operation through ``Client``, over real HTTP and in memory, against the demo agent."""

from __future__ import annotations

import base64

import pytest

from parley.client import Client, TaskTracker, text_of
from parley.demo import ASK_DETAILS, JOKE, REPORT_SECTIONS
from parley.protocol import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.types import (
    DataPart,
    FilePart,
    FileWithBytes,
    Message,
    PushNotificationConfig,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TextPart,
)


async def send_task(client: Client, text: str) -> Task:
    task = await client.send_message(text)
    assert isinstance(task, Task)
    return task


async def test_send_returns_the_completed_task(client: Client) -> None:
    """Spec 7.1: message/send returns the Task; blocking waits for its end."""
    task = await client.send_message("tell me a joke")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.completed
    assert text_of(task) == JOKE


async def test_stream_yields_every_event_in_order(client: Client) -> None:
    """Spec 7.2: message/stream gives the Task, then status and artifact updates, then
    the final status; the tracker rebuilds the task with the shared reducer."""
    tracker = TaskTracker()
    kinds = [event.kind async for event in tracker.follow(client.stream_message("write a report"))]
    assert kinds[0] == "task"
    assert kinds.count("artifact-update") == len(REPORT_SECTIONS)
    assert kinds[-1] == "status-update"
    assert tracker.state is TaskState.completed
    assert tracker.terminal
    assert text_of(tracker.task) == "".join(REPORT_SECTIONS)


async def test_multi_turn_keeps_task_and_context(client: Client) -> None:
    """Spec 6.3 / 7.1: input-required, then replies on the same task and context."""
    first = await client.send_message("book a flight")
    assert isinstance(first, Task)
    assert first.status.state is TaskState.input_required
    assert text_of(first.status.message) == ASK_DETAILS
    second = await client.send_message(
        "from Berlin to Helsinki on 2025-06-01", task_id=first.id, context_id=first.context_id
    )
    assert isinstance(second, Task)
    assert second.status.state is TaskState.input_required
    third = await client.send_message("yes", task_id=first.id, context_id=first.context_id)
    assert isinstance(third, Task)
    assert third.status.state is TaskState.completed
    assert third.artifacts is not None
    data = third.artifacts[0].parts[0]
    assert isinstance(data, DataPart)
    assert data.data["to"] == "Helsinki"


async def test_file_part_round_trip(client: Client) -> None:
    """Spec 6.5.2: a FilePart with bytes goes out and comes back."""
    content = base64.b64encode(b"hello file").decode()
    part = FilePart(file=FileWithBytes(bytes=content, name="note.txt", mime_type="text/plain"))
    task = await client.send_message([TextPart(text="here"), part])
    assert isinstance(task, Task)
    assert task.artifacts
    returned = task.artifacts[0].parts[0]
    assert isinstance(returned, FilePart)
    assert isinstance(returned.file, FileWithBytes)
    assert returned.file.bytes == content
    assert returned.file.name == "echo-note.txt"


async def test_get_task_with_history_length(client: Client) -> None:
    """Spec 7.3: tasks/get honours historyLength."""
    task = await send_task(client, "tell me a joke")
    full = await client.get_task(task.id)
    assert full.id == task.id
    assert full.history
    none = await client.get_task(task.id, history_length=0)
    assert not none.history


async def test_get_unknown_task_raises_task_not_found(client: Client) -> None:
    """Spec 8.2: -32001 arrives as TaskNotFoundError."""
    with pytest.raises(TaskNotFoundError):
        await client.get_task("no-such-task")


async def test_negative_history_length_is_invalid_params(client: Client) -> None:
    """Spec 7.3.1 / 8.1: a negative historyLength is -32602."""
    task = await send_task(client, "tell me a joke")
    with pytest.raises(InvalidParamsError):
        await client.get_task(task.id, history_length=-1)


async def test_cancel_an_interrupted_task_then_a_finished_one(client: Client) -> None:
    """Spec 7.4: tasks/cancel returns the canceled task, again when repeated (idempotent);
    a task finished otherwise refuses (-32002)."""
    waiting = await send_task(client, "book a flight")
    canceled = await client.cancel_task(waiting.id)
    assert canceled.status.state is TaskState.canceled
    again = await client.cancel_task(waiting.id)
    assert again.status.state is TaskState.canceled
    done = await send_task(client, "tell me a joke")
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(done.id)


async def test_resubscribe_to_a_finished_task(client: Client) -> None:
    """v1.0.1 3.1.6: SubscribeToTask on a task in a terminal state is
    UnsupportedOperationError (v0.3's tasks/resubscribe yields the task, then ends)."""
    task = await send_task(client, "tell me a joke")
    with pytest.raises(UnsupportedOperationError, match="terminal state"):
        async for _ in client.resubscribe(task.id):
            pass


async def test_resubscribe_unknown_task(client: Client) -> None:
    """Spec 7.9 / 8.2: resubscribing to an unknown task is -32001."""
    with pytest.raises(TaskNotFoundError):
        async for _ in client.resubscribe("no-such-task"):
            pass


async def test_push_config_methods_reach_the_demo(client: Client) -> None:
    """Spec 7.5-7.8: the demo agent declares push notifications; its guard refuses a
    webhook on a private address (-32602), so the task keeps no config."""
    task = await send_task(client, "tell me a joke")
    config = TaskPushNotificationConfig(
        task_id=task.id, push_notification_config=PushNotificationConfig(url="https://10.0.0.1/")
    )
    with pytest.raises(InvalidParamsError, match="private address"):
        await client.set_push_config(config)
    assert await client.list_push_configs(task.id) == []
    with pytest.raises(TaskNotFoundError, match="no push notification config"):
        await client.get_push_config(task.id, "c1")  # v1.0.1 3.1.8
    await client.delete_push_config(task.id, "c1")


async def test_extended_card_not_declared(client: Client) -> None:
    """v1.0.1 3.3.4: an agent whose card declares no extended card answers
    UnsupportedOperationError."""
    with pytest.raises(UnsupportedOperationError, match="declares no"):
        await client.get_extended_card()


async def test_message_reply_is_a_message() -> None:
    """Spec 7.1: an agent may answer with a Message and no task."""
    from parley.client import connect
    from parley.server import AgentContext, agent, create_app
    from parley.types import Role

    @agent
    async def replier(ctx: AgentContext) -> Message:
        return Message(role=Role.agent, parts=[TextPart(text="hi")], message_id="m1")

    from tests.client.agents import card

    async with connect(create_app(replier, card())) as client:
        reply = await client.send_message("hello")
        assert isinstance(reply, Message)
        assert text_of(reply) == "hi"
        streamed = [event async for event in client.stream_message("hello")]
        assert len(streamed) == 1
        assert isinstance(streamed[0], Message)
