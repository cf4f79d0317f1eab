"""A text chunk's artifact update, made and written faster than the plain way.

A streaming agent yields its answer chunk by chunk, each an artifact update that the
store writes and every stream sends. ``built_text_chunk`` makes the three models as
validation would leave them, without validating, for values of the exact types the
fields take (``types.text_chunk`` validates); ``encode_chunk`` writes a plain chunk's JSON
from its text's, the rest encoded once per artifact (``A2AModel.to_json`` serialises).
"""

from __future__ import annotations

from pydantic_core import to_json

from parley._speedups import _switch
from parley.types import Artifact, TaskArtifactUpdateEvent, TextPart
from parley.types._base import made


def built_text_chunk(
    task_id: str,
    context_id: str,
    artifact_id: str,
    text: str,
    name: str | None = None,
    append: bool | None = None,
    last_chunk: bool | None = None,
) -> TaskArtifactUpdateEvent | None:
    """``types.text_chunk(...)``'s event, made without validating when every value is of
    its field's own type, which validation would keep as it is; ``None`` for anything
    else (a ``str`` subclass, ``1`` for ``True``: validated, and converted or refused,
    the plain way), and when the seam is off."""
    if (
        _switch.on
        and type(task_id) is str
        and type(context_id) is str
        and type(artifact_id) is str
        and type(text) is str
        and (name is None or type(name) is str)
        and (append is None or append is True or append is False)
        and (last_chunk is None or last_chunk is True or last_chunk is False)
    ):
        return _built_chunk(task_id, context_id, artifact_id, text, name, append, last_chunk)
    return None


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


def encode_chunk(event: TaskArtifactUpdateEvent) -> bytes | None:
    """``event``'s v0.3 wire JSON when it is a plain chunk of text (below): the JSON
    of its text put into the rest, which is encoded once for all the chunks of an
    artifact; serialising each event costs several times as much. The serialiser's bytes,
    byte for byte (tests/speedups/test_chunks.py holds it to that): the fields in the
    order of the models, no ``None``. ``None`` for any other event, and for a text no JSON
    can hold (a lone surrogate: the serialiser refuses it), or when the seam is off.

    A plain chunk is a text chunk and nothing more, each value of its field's own type:
    an artifact of one text part, with an id and maybe a name, and flags."""
    artifact, append, last = event.artifact, event.append, event.last_chunk
    if (
        not _switch.on
        or type(event) is not TaskArtifactUpdateEvent
        or event.kind != "artifact-update"
        or event.metadata is not None
        or type(event.task_id) is not str
        or type(event.context_id) is not str
        or type(artifact) is not Artifact
        or type(artifact.artifact_id) is not str
        or not (artifact.name is None or type(artifact.name) is str)
        or artifact.description is not None
        or artifact.extensions is not None
        or artifact.metadata is not None
        or not (append is None or append is True or append is False)
        or not (last is None or last is True or last is False)
    ):
        return None
    parts = artifact.parts
    if type(parts) is not list or len(parts) != 1:
        return None
    part = parts[0]
    if (
        type(part) is not TextPart
        or part.metadata is not None
        or part.kind != "text"
        or type(part.text) is not str
    ):
        return None
    ids = (event.task_id, event.context_id, artifact.artifact_id)
    known, head = _last_head[0]
    try:
        if ids != known:
            head = _TEXT_CHUNK % tuple(map(to_json, ids))
            _last_head[0] = (ids, head)
        name = artifact.name
        return b"%s%s}]%s}%s%s}" % (
            head,
            to_json(part.text),
            b"" if name is None else b',"name":%s' % to_json(name),
            _APPEND[append],
            _LAST_CHUNK[last],
        )
    except ValueError:
        return None
