"""The task state machine: the one place that knows which states are which.

Theory of operation
-------------------
A task starts ``submitted`` (or goes straight to ``working``), may pause in an
*interrupted* state (``input-required``, ``auth-required``) waiting for the client's next
message, and ends in exactly one *terminal* state. A terminal task never changes again
(spec 6.1: it "can't be restarted"). ``unknown`` is what a peer reports when it cannot
tell; parley never moves a task into it, but accepts it from a peer.

Nothing else in parley spells out a set of states: it asks this module.
"""

from __future__ import annotations

from parley.types import (
    Event,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

TERMINAL_STATES: frozenset[TaskState] = frozenset(
    {TaskState.completed, TaskState.canceled, TaskState.failed, TaskState.rejected}
)
"""States a task never leaves."""

INTERRUPTED_STATES: frozenset[TaskState] = frozenset(
    {TaskState.input_required, TaskState.auth_required}
)
"""States where the agent's run is over and the task waits for the client."""

_FINAL_STATES = TERMINAL_STATES | INTERRUPTED_STATES

ACTIVE_STATES: frozenset[TaskState] = frozenset({TaskState.submitted, TaskState.working})
"""States where an agent run is (or should be) in progress."""

_LEGAL_MOVES: dict[TaskState, frozenset[TaskState]] = {
    TaskState.submitted: frozenset(TaskState) - {TaskState.unknown},
    TaskState.working: frozenset(TaskState) - {TaskState.unknown, TaskState.submitted},
    TaskState.input_required: frozenset(TaskState) - {TaskState.unknown, TaskState.submitted},
    TaskState.auth_required: frozenset(TaskState) - {TaskState.unknown, TaskState.submitted},
    TaskState.unknown: frozenset(TaskState) - {TaskState.unknown},
    **{state: frozenset() for state in TERMINAL_STATES},
}
"""For each state, the states a task may move to next (staying put is always allowed
except from a terminal state, where a repeated terminal status is a no-op for readers)."""


def is_terminal(state: TaskState) -> bool:
    """True for completed, canceled, failed and rejected."""
    return state in TERMINAL_STATES


def is_interrupted(state: TaskState) -> bool:
    """True for input-required and auth-required."""
    return state in INTERRUPTED_STATES


def is_final(state: TaskState) -> bool:
    """True where an agent run ends: a terminal or an interrupted state."""
    return state in _FINAL_STATES


def can_move(current: TaskState, new: TaskState) -> bool:
    """Whether a task in ``current`` may move to ``new``."""
    if current is new:
        return current not in TERMINAL_STATES
    return new in _LEGAL_MOVES[current]


def is_cancelable(state: TaskState) -> bool:
    """Whether ``tasks/cancel`` can still act on a task in this state."""
    return can_move(state, TaskState.canceled)


def legal_moves() -> dict[TaskState, frozenset[TaskState]]:
    """The transition table, for docs and tests."""
    return dict(_LEGAL_MOVES)


_WITH_STATUS = (TaskStatusUpdateEvent, Task)


def ends_interaction(event: Event) -> bool:
    """Whether ``event`` is the last of an agent run: a direct ``Message`` reply, or a task
    or status reaching a terminal or interrupted state (spec 7.2: the stream closes)."""
    # Asked several times of every event a send makes: the commonest kinds first, by
    # exact type: a model class's isinstance that fails walks its ABC checks (a Task is
    # not a TaskStatusUpdateEvent, the first of the tuple).
    if type(event) is TaskArtifactUpdateEvent:
        return False
    if type(event) is Task or isinstance(event, _WITH_STATUS):
        return event.status.state in _FINAL_STATES
    return isinstance(event, Message)


def ends_task(event: Event) -> bool:
    """Whether ``event`` leaves its task in a terminal state: a task or status update
    that is (v1.0.1 3.1.6: where a subscription to the task ends)."""
    if type(event) is TaskArtifactUpdateEvent:
        return False
    if type(event) is Task or isinstance(event, _WITH_STATUS):
        return event.status.state in TERMINAL_STATES
    return False
