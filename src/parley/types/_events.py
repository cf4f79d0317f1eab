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


def text_chunk(
    task_id: str,
    context_id: str,
    artifact_id: str,
    text: str,
    name: str | None = None,
    append: bool | None = None,
    last_chunk: bool | None = None,
) -> TaskArtifactUpdateEvent:
    """The artifact update of one chunk of text (what a streaming agent yields, chunk by
    chunk), validated from one dict of the fields given."""
    artifact: dict[str, Any] = {
        "artifact_id": artifact_id,
        "parts": [{"kind": "text", "text": text}],
    }
    if name is not None:
        artifact["name"] = name
    fields: dict[str, Any] = {"task_id": task_id, "context_id": context_id, "artifact": artifact}
    if append is not None:
        fields["append"] = append
    if last_chunk is not None:
        fields["last_chunk"] = last_chunk
    return TaskArtifactUpdateEvent.model_validate(fields)


Event = Annotated[
    Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent,
    Field(discriminator="kind"),
]
"""Anything an agent emits and a stream carries, told apart by ``kind``."""

UpdateEvent = TaskStatusUpdateEvent | TaskArtifactUpdateEvent
