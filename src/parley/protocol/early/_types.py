"""The wire shapes of the 2025-early dialect: ``type``-tagged parts, tasks with ``sessionId``
and no ``kind``, artifacts with ``index``/``append``/``lastChunk``, status events with
``final``, and the card with ``authentication: {schemes, credentials}``.

Input models (params) accept what the dialect's clients send and ignore the rest, like
every wire model of parley; output is built from the core types in ``_convert``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field

from parley.types import A2AModel


class TextPart(A2AModel):
    type: Literal["text"] = "text"
    text: str
    metadata: dict[str, Any] | None = None


class FileContent(A2AModel):
    """A file inline (``bytes``, base64) or by reference (``uri``)."""

    name: str | None = None
    mime_type: str | None = None
    bytes: str | None = None
    uri: str | None = None


class FilePart(A2AModel):
    type: Literal["file"] = "file"
    file: FileContent
    metadata: dict[str, Any] | None = None


class DataPart(A2AModel):
    type: Literal["data"] = "data"
    data: dict[str, Any]
    metadata: dict[str, Any] | None = None


Part = Annotated[TextPart | FilePart | DataPart, Field(discriminator="type")]


class Message(A2AModel):
    role: Literal["user", "agent"]
    parts: list[Part] = Field(min_length=1)
    metadata: dict[str, Any] | None = None


class TaskState(StrEnum):
    """The six states of 2025-early's task lifecycle (the core's nine map onto them)."""

    created = "created"
    working = "working"
    input_required = "input-required"
    completed = "completed"
    failed = "failed"
    canceled = "canceled"


class TaskStatus(A2AModel):
    state: str
    """A ``TaskState`` value (a peer may send others; the client maps what it knows)."""
    message: Message | None = None
    timestamp: str | None = None


class Artifact(A2AModel):
    name: str | None = None
    description: str | None = None
    parts: list[Part]
    index: int = 0
    """The artifact's place among the task's artifacts; a chunk names the one it extends."""
    append: bool | None = None
    last_chunk: bool | None = None
    metadata: dict[str, Any] | None = None


class Task(A2AModel):
    id: str
    session_id: str | None = None
    status: TaskStatus
    artifacts: list[Artifact] | None = None
    history: list[Message] | None = None
    metadata: dict[str, Any] | None = None


class TaskStatusUpdateEvent(A2AModel):
    id: str
    status: TaskStatus
    final: bool = False
    metadata: dict[str, Any] | None = None


class TaskArtifactUpdateEvent(A2AModel):
    id: str
    artifact: Artifact
    metadata: dict[str, Any] | None = None


class PushNotificationConfig(A2AModel):
    """Where the agent posts a task's updates, and the headers it sends with them."""

    url: str
    headers: dict[str, str] | None = None


class TaskSendParams(A2AModel):
    """``tasks/send`` and ``tasks/sendSubscribe``: the client names the task."""

    id: str = Field(min_length=1)
    session_id: str | None = None
    message: Message
    accepted_output_modes: list[str] | None = None
    history_length: int | None = None
    push_notification: PushNotificationConfig | None = None
    metadata: dict[str, Any] | None = None


class TaskQueryParams(A2AModel):
    """``tasks/get``, ``tasks/cancel``, ``tasks/resubscribe``, ``tasks/pushNotification/get``."""

    id: str = Field(min_length=1)
    session_id: str | None = None
    history_length: int | None = None
    metadata: dict[str, Any] | None = None


class TaskPushNotificationParams(A2AModel):
    """``tasks/pushNotification/set``: the task, and where to post its updates."""

    id: str = Field(min_length=1)
    session_id: str | None = None
    url: str
    headers: dict[str, str] | None = None


class AgentProvider(A2AModel):
    organization: str
    url: str | None = None


class AgentCapabilities(A2AModel):
    streaming: bool = False
    push_notifications: bool = False
    state_transition_history: bool = False


class AgentAuthentication(A2AModel):
    schemes: list[str]
    """``bearer``, ``oauth2``, ``apiKey``... (empty: no authentication)."""
    credentials: str | None = None


class AgentSkill(A2AModel):
    id: str
    name: str
    description: str | None = None
    tags: list[str] | None = None
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None


class AgentCard(A2AModel):
    name: str
    description: str | None = None
    url: str
    provider: AgentProvider | None = None
    version: str
    documentation_url: str | None = None
    capabilities: AgentCapabilities = Field(default_factory=AgentCapabilities)
    authentication: AgentAuthentication | None = None
    default_input_modes: list[str] = Field(default_factory=lambda: ["text/plain"])
    default_output_modes: list[str] = Field(default_factory=lambda: ["text/plain"])
    skills: list[AgentSkill] = Field(default_factory=list)
