"""A batch of events folded without push notifications (``_publish._fold``, what a task with
no push config takes, no await) checks, numbers and folds them exactly as the folding
that asks for each event's notifications (``Publisher._fold_notified``)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from parley.server.tasks._events import EventLog
from parley.server.tasks._live import LiveTask
from parley.server.tasks._publish import _fold
from parley.server.tasks._runs import TaskRuns
from parley.stores import MemoryStore, OutboxEntry, StoredEvent
from parley.types import (
    Artifact,
    Event,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from tests.server.agents import story

TASK, CONTEXT = "task-1", "context-1"


def _task(state: TaskState, task_id: str = TASK) -> Task:
    return Task(id=task_id, context_id=CONTEXT, status=TaskStatus(state=state))


def _status(state: TaskState, task_id: str = TASK) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=task_id,
        context_id=CONTEXT,
        status=TaskStatus(state=state),
        final=state not in (TaskState.working, TaskState.submitted),
    )


def _chunk(append: bool) -> TaskArtifactUpdateEvent:
    artifact = Artifact(artifact_id="a", parts=[TextPart(text="x")])
    return TaskArtifactUpdateEvent(
        task_id=TASK, context_id=CONTEXT, artifact=artifact, append=append or None
    )


# each made anew for each folding: a Task event may be given its first message
EVENTS: list[Callable[[], Event]] = [
    lambda: _task(TaskState.working),
    lambda: _task(TaskState.submitted),
    lambda: _task(TaskState.working, "another-task"),
    lambda: _status(TaskState.working),
    lambda: _status(TaskState.input_required),
    lambda: _status(TaskState.completed),
    lambda: _status(TaskState.working, "another-task"),
    lambda: _chunk(False),
    lambda: _chunk(True),
]


class _NoEntries:
    """A push outbox for a task none of whose events causes an entry."""

    async def entries(
        self, live: LiveTask, stored: StoredEvent, task: Task | None
    ) -> Sequence[OutboxEntry]:
        return ()

    def wake(self) -> None:
        """Nothing to deliver."""


def _live(state: TaskState | None, logged: int) -> LiveTask:
    message = Message(message_id="m", role=Role.user, parts=[TextPart(text="hi")])
    task = None if state is None else _task(state)
    live = LiveTask(TASK, CONTEXT, task, EventLog(logged))
    live.pending_user_message = message
    return live


def _seen(outcome: tuple[Task | None, bool, Exception | None], batch: list[StoredEvent]) -> Any:
    task, ends, refused = outcome
    return (
        None if task is None else task.model_dump(),
        ends,
        None if refused is None else str(refused),
        [(stored.sequence, stored.event.model_dump()) for stored in batch],
    )


def _result(steps: Coroutine[Any, Any, Any]) -> Any:
    """What a coroutine that never waits returns (``_NoEntries`` has nothing to wait for)."""
    try:
        steps.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the folding waited")


@given(
    st.sampled_from([None, TaskState.submitted, TaskState.working, TaskState.completed]),
    st.integers(0, 3),
    st.lists(st.integers(0, len(EVENTS) - 1), min_size=1, max_size=5),
)
def test_folding_with_no_push_config_is_the_folding_with_notifications(
    state: TaskState | None, logged: int, picked: list[int]
) -> None:
    runs = TaskRuns(story, MemoryStore())
    runs.notifications = _NoEntries()
    plain: list[StoredEvent] = []
    alone = _fold(_live(state, logged), [EVENTS[i]() for i in picked], plain)
    notified: list[StoredEvent] = []
    outbox: list[OutboxEntry] = []
    live = _live(state, logged)
    live.push_configs = (("config", "0.3"),)  # read: asked for each event's entries
    events = [EVENTS[i]() for i in picked]
    with_them = _result(runs.publisher._fold_notified(live, events, notified, outbox))
    assert _seen(alone, plain) == _seen(with_them, notified)
    assert outbox == []
