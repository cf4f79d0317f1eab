"""Messages: one turn of communication between a client and an agent (spec 6.4)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from parley.types._base import A2AModel
from parley.types._parts import Part


class Role(StrEnum):
    user = "user"
    agent = "agent"


class Message(A2AModel):
    kind: Literal["message"] = "message"
    message_id: str
    role: Role
    parts: list[Part] = Field(min_length=1)
    """The content; a message has at least one part."""
    context_id: str | None = None
    task_id: str | None = None
    reference_task_ids: list[str] | None = None
    """Tasks this message refers to, handed to the agent as context."""
    extensions: list[str] | None = None
    metadata: dict[str, Any] | None = None
