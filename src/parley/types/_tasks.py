"""Tasks, their status and artifacts (spec 6.1-6.3, 6.7)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from parley.types._base import A2AModel
from parley.types._messages import Message
from parley.types._parts import Part


class TaskState(StrEnum):
    """The nine states of a task. Which are terminal lives in ``parley.protocol``."""

    submitted = "submitted"
    working = "working"
    input_required = "input-required"
    completed = "completed"
    canceled = "canceled"
    failed = "failed"
    rejected = "rejected"
    auth_required = "auth-required"
    unknown = "unknown"


class TaskStatus(A2AModel):
    state: TaskState
    message: Message | None = None
    """An agent message that goes with this status (a question, a reason, progress)."""
    timestamp: str | None = None
    """ISO 8601 time the status was recorded."""


class Artifact(A2AModel):
    __slots__ = ("_owned",)
    """Set on the copies the reducer changes in place (``parley.protocol._reducer``)."""

    artifact_id: str
    parts: list[Part] = Field(min_length=1)
    name: str | None = None
    description: str | None = None
    extensions: list[str] | None = None
    metadata: dict[str, Any] | None = None


class Task(A2AModel):
    kind: Literal["task"] = "task"
    id: str
    context_id: str
    status: TaskStatus
    history: list[Message] | None = None
    artifacts: list[Artifact] | None = None
    metadata: dict[str, Any] | None = None
