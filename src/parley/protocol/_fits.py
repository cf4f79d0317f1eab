"""Whether an event the agent emits fits its task: the state machine's checks of one
event (``_states`` has the states and the legal moves).

An update must name the task and context it is for; a ``Task`` event must be that
task; nothing changes a task in a terminal state; and a status moves only as
``can_move`` allows. A refusal is ``InvalidAgentResponseError``: the agent's mistake,
never the caller's.
"""

from __future__ import annotations

from parley.protocol._errors import InvalidAgentResponseError
from parley.protocol._states import _WITH_STATUS, TERMINAL_STATES, can_move
from parley.types import Event, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

_UPDATES = (TaskArtifactUpdateEvent, TaskStatusUpdateEvent)


def check_fits(task_id: str, context_id: str, event: Event, task: Task | None) -> None:
    """Refuse ``event`` (``InvalidAgentResponseError``) unless it fits ``task``, task
    ``task_id`` of context ``context_id`` as the events before it left it (``None``: not
    made yet)."""
    # The kinds parley's models are, by exact type first: a model class's isinstance
    # that fails is ABCMeta's, several times slower (subclasses take the slower way).
    kind = type(event)  # mypy does not narrow by it: the ignores below
    if kind is TaskArtifactUpdateEvent or kind is TaskStatusUpdateEvent:
        _check_ids(task_id, context_id, event)  # type: ignore[arg-type]
    elif kind is Task:
        _check_task(task_id, context_id, event)  # type: ignore[arg-type]
    elif isinstance(event, _UPDATES):
        _check_ids(task_id, context_id, event)
    elif isinstance(event, Task):
        _check_task(task_id, context_id, event)
    if task is None:
        return
    current = task.status.state
    if current in TERMINAL_STATES:
        raise InvalidAgentResponseError(
            f"Task {task_id} is already {current.value} and cannot change"
        )
    if kind is TaskArtifactUpdateEvent:
        return
    if kind is TaskStatusUpdateEvent or kind is Task or isinstance(event, _WITH_STATUS):
        new = event.status.state  # type: ignore[union-attr]
        if new is not current and not can_move(current, new):
            raise InvalidAgentResponseError(
                f"A task cannot move from {current.value} to {new.value}"
            )


def _check_ids(
    task_id: str, context_id: str, event: TaskArtifactUpdateEvent | TaskStatusUpdateEvent
) -> None:
    if event.task_id != task_id or event.context_id != context_id:
        raise InvalidAgentResponseError(
            f"The agent emitted an event for task {event.task_id} in context "
            f"{event.context_id}, but this run is for task {task_id} in context "
            f"{context_id}"
        )


def _check_task(task_id: str, context_id: str, event: Task) -> None:
    if event.id != task_id or event.context_id != context_id:
        raise InvalidAgentResponseError(
            f"The agent emitted task {event.id}, but this run is for task {task_id}"
        )
