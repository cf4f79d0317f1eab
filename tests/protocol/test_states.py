"""The task state machine (spec 6.3 TaskState, 6.1: terminal tasks cannot restart)."""

from __future__ import annotations

import pytest

from parley.protocol import (
    INTERRUPTED_STATES,
    TERMINAL_STATES,
    can_move,
    is_cancelable,
    is_final,
    legal_moves,
)
from parley.types import TaskState


def test_terminal_and_interrupted_sets() -> None:
    assert {s.value for s in TERMINAL_STATES} == {"completed", "canceled", "failed", "rejected"}
    assert {s.value for s in INTERRUPTED_STATES} == {"input-required", "auth-required"}


@pytest.mark.parametrize("terminal", sorted(TERMINAL_STATES))
def test_a_terminal_task_never_changes(terminal: TaskState) -> None:
    assert not any(can_move(terminal, new) for new in TaskState)
    assert not is_cancelable(terminal)
    assert is_final(terminal)


def test_every_state_has_a_row() -> None:
    assert set(legal_moves()) == set(TaskState)


def test_waiting_task_can_resume_work_or_be_canceled() -> None:
    assert can_move(TaskState.input_required, TaskState.working)
    assert can_move(TaskState.auth_required, TaskState.completed)
    assert is_cancelable(TaskState.input_required)
    assert not can_move(TaskState.working, TaskState.submitted)
