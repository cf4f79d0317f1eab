"""Tasks, their status and artifacts (spec 6.1-6.3, 6.7)."""

from __future__ import annotations

from enum import StrEnum
from operator import is_
from typing import TYPE_CHECKING, Any, Literal, Self

from pydantic import Field

from parley.types._base import ENUM_VALUE, A2AModel
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

    if not TYPE_CHECKING:
        value = ENUM_VALUE


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
    __slots__ = ("_wire",)

    kind: Literal["task"] = "task"
    id: str
    context_id: str
    status: TaskStatus
    history: list[Message] | None = None
    artifacts: list[Artifact] | None = None
    metadata: dict[str, Any] | None = None

    def to_json(self) -> bytes:
        """The wire JSON of this task, as bytes, made once for as long as the task holds
        still: a send's final task is written by the store and then sent back.

        The bytes are kept with the pieces they were made from (``_shape``) and given
        again only while those are the very same objects, in the same order (never by
        equality: ``1 == 1.0 == True`` would change the JSON). A copy (``copied``,
        ``model_copy``: a trimmed history) starts with none."""
        shape = _shape(self)
        try:
            wire: tuple[list[Any], bytes] | None = _get_wire(self)
        except AttributeError:  # made by validation, not by ``copied``
            wire = None
        if wire is not None and len(wire[0]) == len(shape) and all(map(is_, wire[0], shape)):
            return wire[1]
        data: bytes = _serialise(self, by_alias=True, exclude_none=True)  # ``A2AModel``'s
        _set_wire(self, (shape, data))
        return data

    def copied(self, **update: Any) -> Self:
        copy = A2AModel.copied(self, **update)  # (not ``super()``: a send makes two)
        _set_wire(copy, None)  # read at once by ``to_json``: no AttributeError to catch
        return copy


_serialise = Task.__pydantic_serializer__.to_json
_get_wire = Task.__dict__["_wire"].__get__
_set_wire = Task.__dict__["_wire"].__set__
"""The kept JSON (the slot itself: pydantic's ``__getattr__`` makes a missing one slow,
and its ``__setattr__`` refuses a name it does not know)."""


def _shape(task: Task) -> list[Any]:
    """What ``task``'s JSON is made of, as the objects that may change in place or be
    replaced: its fields and its status's, the messages of its history, its artifacts,
    their fields and their parts (``apply`` adds messages, replaces the status, adds or
    replaces an artifact, adds parts to one, merges its metadata). One list: nothing is
    ever taken out of these lists, so any change moves or replaces some object in it.
    The objects it holds are values (a message, a part): ``apply`` never changes an
    event, and the server never changes a message or a part it was given."""
    fields = task.__dict__
    history, artifacts = fields["history"], fields["artifacts"]
    shape = [*fields.values(), *fields["status"].__dict__.values(), *(history or ())]
    if artifacts:
        shape += artifacts
        for artifact in artifacts:
            shape += artifact.__dict__.values()
            shape += artifact.parts
    return shape
