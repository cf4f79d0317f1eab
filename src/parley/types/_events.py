"""Streaming update events, and the union of everything an agent can emit (spec 7.2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field
from pydantic_core import to_json

from parley.types._base import A2AModel, made
from parley.types._messages import Message
from parley.types._parts import TextPart
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
    __slots__ = ("_text",)

    kind: Literal["artifact-update"] = "artifact-update"
    task_id: str
    context_id: str
    artifact: Artifact
    append: bool | None = None
    """True: add these parts to the artifact with the same id sent before."""
    last_chunk: bool | None = None
    metadata: dict[str, Any] | None = None

    def to_json(self) -> bytes:
        """The wire JSON of this event, as bytes."""
        try:
            _get_text(self)
        except AttributeError:  # not made by ``text_chunk`` (validated, or copied)
            return super().to_json()
        return _text_chunk_json(self)


_get_text = TaskArtifactUpdateEvent.__dict__["_text"].__get__
_set_text = TaskArtifactUpdateEvent.__dict__["_text"].__set__
"""Set on an event ``text_chunk`` made (the slot itself: see ``Task``'s ``_wire``)."""
_new_artifact_update: Callable[[dict[str, Any]], TaskArtifactUpdateEvent] = (
    TaskArtifactUpdateEvent.__pydantic_validator__.validate_python
)


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
    chunk), the model validation would make from one dict, whose wire JSON is then made
    as ``_text_chunk_json`` says.

    Values of the exact types the fields take are what validation would keep as they
    are: the three models are then made as validation leaves them (their fields, the
    fields set), without validating (a third of the cost). Anything else (a ``str``
    subclass, ``1`` for ``True``) is validated, and converted or refused as ever."""
    if (
        type(task_id) is str
        and type(context_id) is str
        and type(artifact_id) is str
        and type(text) is str
        and (name is None or type(name) is str)
        and (append is None or append is True or append is False)
        and (last_chunk is None or last_chunk is True or last_chunk is False)
    ):
        return _built_chunk(task_id, context_id, artifact_id, text, name, append, last_chunk)
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
    event = _new_artifact_update(fields)
    _set_text(event, True)
    return event


def _built_chunk(
    task_id: str,
    context_id: str,
    artifact_id: str,
    text: str,
    name: str | None,
    append: bool | None,
    last_chunk: bool | None,
) -> TaskArtifactUpdateEvent:
    part = made(TextPart, {"kind": "text", "text": text, "metadata": None}, {"kind", "text"})
    artifact = made(
        Artifact,
        {
            "artifact_id": artifact_id,
            "parts": [part],
            "name": name,
            "description": None,
            "extensions": None,
            "metadata": None,
        },
        {"artifact_id", "parts"} if name is None else {"artifact_id", "parts", "name"},
    )
    fields_set = {"task_id", "context_id", "artifact"}
    if append is not None:
        fields_set.add("append")
    if last_chunk is not None:
        fields_set.add("last_chunk")
    event = made(
        TaskArtifactUpdateEvent,
        {
            "kind": "artifact-update",
            "task_id": task_id,
            "context_id": context_id,
            "artifact": artifact,
            "append": append,
            "last_chunk": last_chunk,
            "metadata": None,
        },
        fields_set,
    )
    _set_text(event, True)
    return event


_TEXT_CHUNK = (
    b'{"kind":"artifact-update","taskId":%s,"contextId":%s,'
    b'"artifact":{"artifactId":%s,"parts":[{"kind":"text","text":'
)
_APPEND = {None: b"", True: b',"append":true', False: b',"append":false'}
_LAST_CHUNK = {None: b"", True: b',"lastChunk":true', False: b',"lastChunk":false'}
_last_head: list[tuple[tuple[str, str, str], bytes]] = [(("", "", ""), b"")]
"""The ids of the last chunk's artifact and its JSON up to the text, one entry replaced
whole: the chunks of one artifact come one after another (a stream's batch, a store's
write)."""


def _text_chunk_json(event: TaskArtifactUpdateEvent) -> bytes:
    """The wire JSON of an event ``text_chunk`` made: the JSON of its text put into the
    rest, which is encoded once for all the chunks of an artifact. Serialising each
    event costs three times as much. The JSON is the serialiser's, byte for byte (a test
    holds it to that): the fields in the order of the models, no ``None``. The event is
    parley's own, changed by no one since it was made (a published event never is)."""
    artifact = event.artifact
    ids = (event.task_id, event.context_id, artifact.artifact_id)
    known, head = _last_head[0]
    if ids != known:
        head = _TEXT_CHUNK % tuple(map(to_json, ids))
        _last_head[0] = (ids, head)
    name = artifact.name
    return b"%s%s}]%s}%s%s}" % (
        head,
        to_json(artifact.parts[0].text),  # type: ignore[union-attr]
        b"" if name is None else b',"name":%s' % to_json(name),
        _APPEND[event.append],
        _LAST_CHUNK[event.last_chunk],
    )


Event = Annotated[
    Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent,
    Field(discriminator="kind"),
]
"""Anything an agent emits and a stream carries, told apart by ``kind``."""

UpdateEvent = TaskStatusUpdateEvent | TaskArtifactUpdateEvent
