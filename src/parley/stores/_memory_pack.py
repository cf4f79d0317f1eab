"""A finished task of the memory store as one ``bytes``: snapshot, event log and place.

Theory of operation
-------------------
A finished task holds still, so the memory store keeps it in the smallest form that can
give back exactly what was stored (the ``Task`` for ``get``, every event for ``events``):

- a fixed header: snapshot and last event sequence, last touched, when it was filed in
  the index, its state, and its context id;
- its snapshot's wire JSON, then one line per event, told against the snapshot: the
  events that led to a task mostly carry pieces the finished task still holds (the
  status it ended in, its artifacts, its history), so such an event is written as where
  in the snapshot those pieces are, by identity of the objects the reducer folded in
  (``apply`` keeps them), never by equality (``1 == 1.0 == True`` would change the JSON).
  Any other event is its wire JSON. No event is serialised again when its task ends.
- the whole is then shortened by plain byte replacement, undone in reverse order: the
  task and context ids (``\\x01``, ``\\x02``) and the field names every task repeats
  (``\\x03``...), each by a control character that wire JSON never holds raw (JSON
  escapes them in strings), so any content round-trips exactly.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, NamedTuple

from pydantic import TypeAdapter

from parley.stores._memory_index import Place
from parley.stores._protocols import StoredEvent
from parley.types import (
    Artifact,
    Event,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

_EVENT: TypeAdapter[Event] = TypeAdapter(Event)
_HEADER = struct.Struct("<qqddBH")
"""Snapshot sequence, last event sequence, last touched and filed (epoch seconds), state
index, length of the context id that follows."""
STATES = tuple(TaskState)
_STATE_INDEX = {state: index for index, state in enumerate(STATES)}

_TOKENS = (
    b'{"kind":"task","id":"\x01","contextId":"\x02","status":{"state":"',
    b'{"kind":"status-update","taskId":"\x01","contextId":"\x02","status":{"state":"',
    b'{"kind":"artifact-update","taskId":"\x01","contextId":"\x02","artifact":{"artifactId":"',
    b'"}],"contextId":"\x02","taskId":"\x01"}',
    b'{"kind":"message","messageId":"',
    b'","role":"user","parts":[',
    b'","role":"agent","parts":[',
    b'{"kind":"text","text":"',
    b'{"kind":"data","data":',
    b'{"kind":"file","file":{',
    b'"},"history":[',
    b'],"artifacts":[',
    b'{"artifactId":"',
    b'","timestamp":"',
    b'{"state":"',
    b'+00:00"}',
    b'"}],"name":"',
    b'","parts":[',
    b'"metadata":{',
    b'"contextId":"\x02"',
    b'"taskId":"\x01"',
    b"completed",
    b"working",
    b"submitted",
    b"input-required",
    b',"final":true}',
)
_CODES = [bytes((code,)) for code in range(3, 32) if code != 10]  # "\n" separates lines
_PAIRS = tuple(zip(_TOKENS, _CODES, strict=False))
assert len(_PAIRS) == len(_TOKENS)
_BACK = tuple(reversed(_PAIRS))
_FLAGS = {None: b"n", True: b"t", False: b"f"}
_UNFLAGS = {b"n": None, b"t": True, b"f": False}


class Finished(NamedTuple):
    """What a finished task's record says."""

    json: bytes
    """The snapshot's wire JSON."""
    sequence: int
    events: list[StoredEvent]


def pack(
    task: Task, sequence: int, events: Sequence[StoredEvent], touched: float, filed: float
) -> bytes:
    """The record of ``task`` (its terminal snapshot, current as of ``sequence``), logged
    as ``events``, last touched at ``touched``, filed in the index at ``filed``."""
    lines = [task.to_json()]
    lines += [b"%d%s" % (stored.sequence, _told(stored.event, task)) for stored in events]
    context_id = _bytes(task.context_id)
    body = _shorten(b"\n".join(lines), _bytes(task.id), context_id)
    last = events[-1].sequence if events else 0
    state = _STATE_INDEX[task.status.state]
    head = _HEADER.pack(sequence, last, touched, filed, state, len(context_id))
    return head + context_id + body


def header(record: bytes) -> tuple[int, int, float, Place]:
    """Snapshot sequence, last event sequence, last touched and place of a record."""
    sequence, last, touched, filed, state, size = _HEADER.unpack_from(record)
    context_id = record[_HEADER.size : _HEADER.size + size].decode("utf-8", "surrogatepass")
    return sequence, last, touched, Place(filed, STATES[state], context_id)


def snapshot(task_id: str, record: bytes) -> tuple[Task, int]:
    """The snapshot of a record and its sequence."""
    sequence, _, _, _, _, size = _HEADER.unpack_from(record)
    body = _body(task_id, record, size)
    end = body.find(b"\n")
    return Task.model_validate_json(body if end < 0 else body[:end]), sequence


def unpack(task_id: str, record: bytes) -> Finished:
    """Everything a record holds."""
    sequence, _, _, _, _, size = _HEADER.unpack_from(record)
    lines = _body(task_id, record, size).split(b"\n")
    task = Task.model_validate_json(lines[0])
    events = [_untold(line, task) for line in lines[1:]]
    return Finished(lines[0], sequence, events)


def _body(task_id: str, record: bytes, size: int) -> bytes:
    start = _HEADER.size + size
    return _lengthen(record[start:], _bytes(task_id), record[_HEADER.size : start])


def _bytes(text: str) -> bytes:
    """``text`` as bytes, whatever it holds (an id is only ever matched, never sent)."""
    return text.encode("utf-8", "surrogatepass")


def _shorten(data: bytes, task_id: bytes, context_id: bytes) -> bytes:
    if task_id:
        data = data.replace(task_id, b"\x01")
    if context_id:
        data = data.replace(context_id, b"\x02")
    for token, code in _PAIRS:
        data = data.replace(token, code)
    return data


def _lengthen(data: bytes, task_id: bytes, context_id: bytes) -> bytes:
    for token, code in _BACK:
        data = data.replace(code, token)
    if context_id:
        data = data.replace(b"\x02", context_id)
    if task_id:
        data = data.replace(b"\x01", task_id)
    return data


# -- events told against the snapshot -----------------------------------------------


def _told(event: Event, task: Task) -> bytes:
    """``event`` as a line: where the snapshot holds its pieces, or its wire JSON."""
    if isinstance(event, TaskStatusUpdateEvent):
        if _ours(event, task) and event.metadata is None and _same_status(event.status, task):
            return b"S" + _FLAGS[event.final]
    elif isinstance(event, TaskArtifactUpdateEvent):
        at = _artifact_at(event.artifact, task.artifacts)
        if _ours(event, task) and event.metadata is None and at is not None:
            return b"A%s%s%d" % (_FLAGS[event.append], _FLAGS[event.last_chunk], at)
    elif isinstance(event, Task):
        told = _told_task(event, task)
        if told is not None:
            return told
    elif task.history:
        for at, message in enumerate(task.history):
            if message is event:
                return b"M%d" % at
    return b"R" + event.to_json()


def _ours(event: TaskStatusUpdateEvent | TaskArtifactUpdateEvent, task: Task) -> bool:
    return event.task_id == task.id and event.context_id == task.context_id


def _same_status(status: TaskStatus, task: Task) -> bool:
    final = task.status
    return status is final or (
        status.state is final.state
        and status.timestamp == final.timestamp
        and status.message is final.message
    )


def _artifact_at(artifact: Artifact, artifacts: list[Artifact] | None) -> int | None:
    for at, kept in enumerate(artifacts or ()):
        if kept is artifact or _same_artifact(artifact, kept):
            return at
    return None


def _same_artifact(one: Artifact, other: Artifact) -> bool:
    """The same artifact, as ``apply`` copies one: a new object and parts list holding
    the very same values."""
    return (
        one.artifact_id == other.artifact_id
        and one.name == other.name
        and one.description == other.description
        and one.extensions == other.extensions
        and one.metadata is other.metadata
        and len(one.parts) == len(other.parts)
        and all(part is kept for part, kept in zip(one.parts, other.parts, strict=True))
    )


def _told_task(event: Task, task: Task) -> bytes | None:
    if event.id != task.id or event.context_id != task.context_id:
        return None
    if event.metadata is not task.metadata:
        return None
    history = _prefix(event.history, task.history, _is)
    artifacts = _prefix(event.artifacts, task.artifacts, _same_artifact)
    if history is None or artifacts is None:
        return None
    status = b"=" if _same_status(event.status, task) else event.status.to_json()
    return b"T%s %s %s" % (history, artifacts, status)


def _is(one: Any, other: Any) -> bool:
    return one is other


def _prefix(items: list[Any] | None, kept: list[Any] | None, same: Any) -> bytes | None:
    """How many of ``kept`` ``items`` are (``b"n"``: ``items`` is ``None``), or ``None``
    if they are not its first ones."""
    if items is None:
        return b"n"
    if len(items) > len(kept or ()):
        return None
    if kept and not all(same(item, k) for item, k in zip(items, kept, strict=False)):
        return None
    return b"%d" % len(items)


def _untold(line: bytes, task: Task) -> StoredEvent:
    at = 0
    while line[at : at + 1].isdigit():
        at += 1
    sequence, kind, rest = int(line[:at]), line[at : at + 1], line[at + 1 :]
    return StoredEvent(sequence, _event(kind, rest, task))


def _event(kind: bytes, rest: bytes, task: Task) -> Event:
    if kind == b"S":
        return TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=task.status, final=rest == b"t"
        )
    if kind == b"A":
        return TaskArtifactUpdateEvent(
            task_id=task.id,
            context_id=task.context_id,
            artifact=(task.artifacts or [])[int(rest[2:])],
            append=_UNFLAGS[rest[:1]],
            last_chunk=_UNFLAGS[rest[1:2]],
        )
    if kind == b"T":
        history, artifacts, status = rest.split(b" ", 2)
        return task.model_copy(
            update={
                "status": task.status if status == b"=" else TaskStatus.model_validate_json(status),
                "history": _first(task.history, history),
                "artifacts": _first(task.artifacts, artifacts),
            }
        )
    if kind == b"M":
        return (task.history or [])[int(rest)]
    return _EVENT.validate_json(rest)


def _first(kept: list[Any] | None, count: bytes) -> list[Any] | None:
    return None if count == b"n" else list((kept or [])[: int(count)])
