"""One scenario table, run over every binding (JSON-RPC, HTTP+JSON, gRPC), server and
client alike (spec 3.4.1: identical functionality, consistent behaviour, same errors).

Every test here takes the ``client`` fixture, which is parametrised over the three
bindings: no binding has a test the others lack.
"""

from __future__ import annotations

import pytest

from parley.client import Client, ClientCallContext
from parley.protocol import (
    BY_NAME,
    AuthenticatedExtendedCardNotConfiguredError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.types import (
    Message,
    MessageSendParams,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)


def _text(task: Task) -> str:
    assert task.artifacts
    return "".join(
        part.text
        for artifact in task.artifacts
        for part in artifact.parts
        if isinstance(part, TextPart)
    )


def _version(client: Client) -> str:
    """The A2A version ``client`` speaks."""
    protocol: str = client.transport.interface.protocol  # type: ignore[attr-defined]
    return protocol


async def _task(client: Client, text: str, **options: object) -> Task:
    result = await client.send_message(text, **options)  # type: ignore[arg-type]
    assert isinstance(result, Task)
    return result


async def test_send_message_runs_a_task_to_completion(client: Client) -> None:
    """Spec 7.1: message/send blocks until the task is terminal and returns it."""
    task = await _task(client, "echo hello")
    assert task.status.state is TaskState.completed
    assert _text(task) == "hello"


async def test_send_message_direct_reply(client: Client) -> None:
    """Spec 7.1: the agent may answer with a Message instead of a task."""
    result = await client.send_message("reply hi")
    assert isinstance(result, Message)
    assert result.role is Role.agent
    assert result.parts[0] == TextPart(text="hi")


async def test_multi_turn_task(client: Client) -> None:
    """Spec 6.3 / 7.1: input-required, then a follow-up message on the same task."""
    first = await _task(client, "ask")
    assert first.status.state is TaskState.input_required
    second = await _task(client, "more", task_id=first.id, context_id=first.context_id)
    assert second.id == first.id
    assert second.status.state is TaskState.completed
    assert _text(second) == "ask | more"


async def test_get_task_with_history_length(client: Client) -> None:
    """Spec 7.3: tasks/get returns the task, history trimmed to historyLength."""
    first = await _task(client, "ask")
    await _task(client, "more", task_id=first.id)
    full = await client.get_task(first.id)
    assert full.status.state is TaskState.completed
    assert full.history is not None
    assert len(full.history) >= 2
    trimmed = await client.get_task(first.id, history_length=1)
    assert trimmed.history is not None
    assert len(trimmed.history) == 1
    assert trimmed.history[0] == full.history[-1]


async def test_get_unknown_task(client: Client) -> None:
    """Spec 8.2: -32001 TaskNotFoundError."""
    with pytest.raises(TaskNotFoundError):
        await client.get_task("no-such-task")


async def test_cancel_task(client: Client) -> None:
    """Spec 7.4: tasks/cancel answers the canceled task; a task finished otherwise is not
    cancelable (-32002). Canceling it again: v1.0 answers the canceled task (v1.0.1
    3.3.1, idempotent), v0.3 -32002 (v0.3.0 8.2: already completed, failed or canceled)."""
    task = await _task(client, "ask")
    canceled = await client.cancel_task(task.id)
    assert canceled.status.state is TaskState.canceled
    if _version(client) == "1.0":
        again = await client.cancel_task(task.id)
        assert (again.id, again.status.state) == (task.id, TaskState.canceled)
    else:
        with pytest.raises(TaskNotCancelableError, match="canceled"):
            await client.cancel_task(task.id)
    done = await _task(client, "echo hi")
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(done.id)


async def test_cancel_unknown_task(client: Client) -> None:
    """Spec 8.2: -32001 for a task the server does not know."""
    with pytest.raises(TaskNotFoundError):
        await client.cancel_task("no-such-task")


def _terminal_refusal(client: Client) -> type[Exception]:
    """What a message to a task in a terminal state answers: v1.0.1 3.1.1 and 3.1.2 name
    UnsupportedOperationError; v0.3 names none, and parley answers -32602."""
    return UnsupportedOperationError if _version(client) == "1.0" else InvalidParamsError


async def test_message_to_a_terminal_task_is_refused(client: Client) -> None:
    """Spec 6.1: a terminal task cannot be restarted."""
    task = await _task(client, "echo done")
    with pytest.raises(_terminal_refusal(client), match="terminal state"):
        await client.send_message("again", task_id=task.id)


async def test_agent_failure_fails_the_task_without_leaking(client: Client) -> None:
    """Spec 6.3: an agent's exception fails the task; its text never reaches the caller."""
    task = await _task(client, "boom")
    assert task.status.state is TaskState.failed
    assert "hunter2" not in task.to_json().decode()


async def test_stream_message(client: Client) -> None:
    """Spec 7.2 / 3.3: the run's events in order, ending with the final status."""
    events = [event async for event in client.stream_message("chunks 3")]
    assert isinstance(events[0], Task | TaskStatusUpdateEvent)
    chunks = [event for event in events if isinstance(event, TaskArtifactUpdateEvent)]
    assert [chunk.artifact.parts[0] for chunk in chunks] == [
        TextPart(text=f"{index},") for index in range(3)
    ]
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.final
    assert last.status.state is TaskState.completed


async def test_stream_to_a_terminal_task_is_refused_before_any_event(client: Client) -> None:
    """Spec 3.3 / 6.1: the error of a stream that never started reaches the caller as its
    class (over JSON-RPC it is the SSE stream's one event, spec 3.3.1)."""
    task = await _task(client, "echo done")
    with pytest.raises(_terminal_refusal(client), match="terminal state"):
        async for _ in client.stream_message("again", task_id=task.id):
            pass


async def test_stream_items_carry_rising_sequence_numbers(client: Client) -> None:
    """Spec 3.3 and DESIGN invariants: every binding numbers events; SSE id = sequence."""
    params = MessageSendParams(
        message=Message(message_id="m-seq", role=Role.user, parts=[TextPart(text="chunks 2")])
    )
    ids = [item.id or 0 async for item in client.stream(BY_NAME["stream_message"], params)]
    assert all(event_id > 0 for event_id in ids)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


async def test_resubscribe_resumes_after_the_last_event_seen(client: Client) -> None:
    """Spec 7.9: tasks/resubscribe; with Last-Event-ID it replays what came after it
    (here of a task paused in input-required, whose events the server still holds). A
    v0.3 stream ends there; a v1.0 one (3.1.6) follows the next turn to its end."""
    params = MessageSendParams(
        message=Message(message_id="m-resume", role=Role.user, parts=[TextPart(text="ask")])
    )
    items = [item async for item in client.stream(BY_NAME["stream_message"], params)]
    last = items[-1].event
    assert isinstance(last, TaskStatusUpdateEvent)
    task_id = last.task_id
    assert len(items) >= 3
    cut = items[0].id
    assert cut is not None
    context = ClientCallContext(last_event_id=cut)
    resumed = client.stream(BY_NAME["resubscribe"], TaskIdParams(id=task_id), context)
    replayed = [await anext(resumed) for _ in items[1:]]
    assert [(item.id, item.event) for item in replayed] == [
        (item.id, item.event) for item in items[1:]
    ]
    if _version(client) == "0.3":
        assert [item async for item in resumed] == []
        return
    await _task(client, "more", task_id=task_id)
    rest = [item async for item in resumed]
    assert [item.id for item in rest] == list(range(items[-1].id + 1, rest[-1].id + 1))  # type: ignore[operator]
    assert isinstance(rest[-1].event, TaskStatusUpdateEvent)
    assert rest[-1].event.status.state is TaskState.completed


async def test_resubscribe_to_an_interrupted_task(client: Client) -> None:
    """Resubscribing shows the task as it is first. v0.3 (7.9): a paused task's stream
    ends there. v1.0 (3.1.6): the subscription works on any task not in a terminal state
    and ends at one: it follows the turn the next message starts through to its end."""
    task = await _task(client, "ask")
    stream = client.resubscribe(task.id)
    first = await anext(stream)
    assert isinstance(first, Task)
    assert first.status.state is TaskState.input_required
    if _version(client) == "0.3":
        assert [event async for event in stream] == []
        return
    answered = await _task(client, "more", task_id=task.id)
    assert answered.status.state is TaskState.completed
    rest = [event async for event in stream]
    last = rest[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert (last.task_id, last.status.state) == (task.id, TaskState.completed)
    assert any(isinstance(event, TaskArtifactUpdateEvent) for event in rest)


async def test_a_resumed_stream_replays_the_end_of_a_finished_task(client: Client) -> None:
    """A stream resumed with Last-Event-ID after its task finished replays what it
    missed, to the final status, in both versions: v1.0's refusal of a terminal task
    (3.1.6) is for a new subscription, not for the rest of one."""
    params = MessageSendParams(
        message=Message(message_id="m-finished", role=Role.user, parts=[TextPart(text="chunks 2")])
    )
    items = [item async for item in client.stream(BY_NAME["stream_message"], params)]
    last = items[-1].event
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.completed
    context = ClientCallContext(last_event_id=items[0].id)
    task = TaskIdParams(id=last.task_id)
    resumed = [item async for item in client.stream(BY_NAME["resubscribe"], task, context)]
    assert [(item.id, item.event) for item in resumed] == [
        (item.id, item.event) for item in items[1:]
    ]


async def test_resubscribe_to_a_terminal_task(client: Client) -> None:
    """v1.0.1 3.1.6: UnsupportedOperationError for a task in a terminal state, before any
    event; v0.3 (7.9 names no error) gives the Task and ends."""
    task = await _task(client, "echo done")
    if _version(client) == "1.0":
        with pytest.raises(UnsupportedOperationError, match="terminal state"):
            async for _ in client.resubscribe(task.id):
                pass
        return
    events = [event async for event in client.resubscribe(task.id)]
    assert len(events) == 1
    assert isinstance(events[0], Task)
    assert events[0].status.state is TaskState.completed


async def test_resubscribe_unknown_task(client: Client) -> None:
    """Spec 8.2: -32001, before any event."""
    with pytest.raises(TaskNotFoundError):
        async for _ in client.resubscribe("no-such-task"):
            pass


async def test_push_notification_operations_are_refused(client: Client) -> None:
    """Spec 7.5-7.8, 8.2: -32003 from every push-config operation when unsupported."""
    task = await _task(client, "echo x")
    config = TaskPushNotificationConfig(
        task_id=task.id,
        push_notification_config=PushNotificationConfig(url="https://example.com/hook", id="c1"),
    )
    with pytest.raises(PushNotificationNotSupportedError):
        await client.set_push_config(config)
    with pytest.raises(PushNotificationNotSupportedError):
        await client.get_push_config(task.id, "c1")
    with pytest.raises(PushNotificationNotSupportedError):
        await client.list_push_configs(task.id)
    with pytest.raises(PushNotificationNotSupportedError):
        await client.delete_push_config(task.id, "c1")


async def test_extended_card_not_declared(client: Client) -> None:
    """An agent whose card declares no extended card: v0.3 (7.10, 8.2) -32007; v1.0.1
    3.3.4 UnsupportedOperationError (ExtendedAgentCardNotConfiguredError is for a card
    that declares one the agent has not configured)."""
    refusal = (
        UnsupportedOperationError
        if _version(client) == "1.0"
        else AuthenticatedExtendedCardNotConfiguredError
    )
    with pytest.raises(refusal, match="declares no authenticated extended card"):
        await client.get_extended_card()
