"""Streaming update events, and the union of everything an agent can emit (spec 7.2)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from parley.types._base import A2AModel
from parley.types._messages import Message
from parley.types._tasks import Artifact, Task, TaskStatus


class TaskStatusUpdateEvent(A2AModel):
    kind: Literal["status-update"] = "status-update"
    task_id: str
    context_id: str
    status: TaskStatus
    final: bool = False
    """True on the last event of this interaction's stream."""
    metadata: dict[str, Any] | None = None


class TaskArtifactUpdateEvent(A2AModel):
    kind: Literal["artifact-update"] = "artifact-update"
    task_id: str
    context_id: str
    artifact: Artifact
    append: bool | None = None
    """True: add these parts to the artifact with the same id sent before."""
    last_chunk: bool | None = None
    metadata: dict[str, Any] | None = None


Event = Annotated[
    Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent,
    Field(discriminator="kind"),
]
"""Anything an agent emits and a stream carries, told apart by ``kind``."""

UpdateEvent = TaskStatusUpdateEvent | TaskArtifactUpdateEvent
