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
- the whole is then shortened, undone in reverse order: the beginning every task's JSON
  shares (with its ids) is cut off, and by plain byte replacement the end of each of its
  history messages (with the ids) and the two longest field names every message
  repeats, each by a control character that wire JSON never holds raw (JSON escapes
  them in strings), so any content round-trips exactly. The commonest task (one user
  message, a status with no message) is shortened the same way without a search: where
  each piece is, is known from its values, and confirmed by one comparison; and when
  its JSON is written out from its values (``written_pieces``), the record is joined
  from those pieces, the task's JSON never made.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from operator import is_
from typing import Any, NamedTuple

from pydantic import TypeAdapter

from parley._speedups import encode_task
from parley._speedups._v03_json import written_pieces
from parley.stores._memory_index import Place
from parley.stores._protocols import StoredEvent
from parley.types import (
    Artifact,
    Event,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

_EVENT: TypeAdapter[Event] = TypeAdapter(Event)
_HEADER = struct.Struct("<qqddBH")
"""Snapshot sequence, last event sequence, last touched and filed (epoch seconds), state
index, length of the context id that follows."""
STATES = tuple(TaskState)
_STATE_INDEX = {state: index for index, state in enumerate(STATES)}
_STATE_VALUES = {state: state.value.encode() for state in TaskState}
_STATES_SPACED = {state: value + b" " for state, value in _STATE_VALUES.items()}

_PREFIX = b'{"kind":"task","id":"%s","contextId":"%s","status":{"state":"'
"""How the wire JSON of every task begins: kept without it."""
_TAIL = b'"}],"contextId":"%s","taskId":"%s"}'
"""How a message of the task's history ends (a text part last)."""
_TOKENS = (
    (b'"},"history":[{"kind":"message","messageId":"', 1),
    (b'","role":"user","parts":[{"kind":"text","text":"', -1),
)
"""Field names every task repeats, with how many to replace (``-1``: all; one more
elsewhere stays as it is: every code is put back wherever it is, so any count is
lossless). A replacement costs the same however short its token (the record is scanned
up to it, twice, and copied), so only the longest pay for what they save: these two and
the history's tail. The artifact's and the status's field names are shorter, and left
as they are."""
_CODES = [bytes((code,)) for code in range(2, 32) if code != 10]  # "\n" separates lines
_PAIRS = tuple((token, code, count) for (token, count), code in zip(_TOKENS, _CODES, strict=False))
(_OPENING, _OPENED, _), (_ASKING, _ASKED, _) = _PAIRS  # the tokens and their codes
_TASK_ID, _CONTEXT_ID, _STATE = _PREFIX.split(b"%s")
_TAIL_CONTEXT_ID, _TAIL_TASK_ID, _END = _TAIL.split(b"%s")
_STAMP = b'","timestamp":"'
"""The pieces of a task's JSON between its values when its status has no message and its
history is one message with a text part, the user's (``_short``)."""
_STATE_TEXTS = {state: state.value for state in TaskState}
_STAMP_TEXT, _OPENED_TEXT, _ASKED_TEXT = _STAMP.decode(), _OPENED.decode(), _ASKED.decode()
_ASKING_TEXT = ',"role":"user","parts":[{"kind":"text","text":'
"""The same pieces as text, for ``_cut`` (the last as ``written_pieces`` quotes it: ``_ASKING``
less the text's opening quote)."""
_BACK = tuple((token, code) for token, code, _ in reversed(_PAIRS))
_NUMBERED = 64
_NUMBERS = tuple(b"%d" % number for number in range(_NUMBERED))
"""The text of the sequence numbers a task's events mostly have."""
_FLAGS = {None: b"n", True: b"t", False: b"f"}
_STATUS_LINES = {final: b"S" + flag for final, flag in _FLAGS.items()}
_ARTIFACT_LINES = {
    (append, last): b"A" + flag + last_flag
    for append, flag in _FLAGS.items()
    for last, last_flag in _FLAGS.items()
}
_FIRST_ARTIFACT_LINES = {flags: line + b"0" for flags, line in _ARTIFACT_LINES.items()}
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
    pieces = written_pieces(task)
    short = None if pieces is None else _cut(pieces, task)
    if short is None:
        json = encode_task(task, "0.3") or task.to_json()
        task_id, context_id = _bytes(task.id), _bytes(task.context_id)
        short = _short(json, task, task_id, context_id)
    else:
        context_id = task.context_id.encode()  # ASCII: ``_cut`` said so
    lines = [json if short is None else short]
    numbers = _NUMBERS
    for stored in events:  # concatenated: ``b"%d%s" %`` costs more
        logged = stored.sequence
        number = numbers[logged] if logged < _NUMBERED else b"%d" % logged
        lines.append(number + _told(stored, task))
    body = b"\n".join(lines)
    if short is None:
        body = _shorten(body, task_id, context_id)
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


def _short(json: bytes, task: Task, task_id: bytes, context_id: bytes) -> bytes | None:
    """The task's JSON shortened as ``_shorten`` shortens it, without searching it, when
    the task is the commonest: a status with a timestamp and no message, and one message
    in its history, with a text part first (``None`` otherwise: ``_shorten`` then).

    How its JSON then begins is made from its values and compared with it, whole, once:
    a field more, another role, a value that JSON escapes, and they differ. Only bytes
    found equal to the pieces are cut, so the record is lossless whatever the task holds
    (and the same as ``_shorten`` makes of it). One comparison instead of ``_shorten``'s
    three ``bytes.replace``, each of which prepares its long needle twice and scans the
    record twice."""
    status, history = task.status, task.history
    timestamp = status.timestamp
    if status.message is not None or timestamp is None or not history or len(history) != 1:
        return None
    message = history[0]
    parts = message.parts
    part = parts[0] if parts else None  # none: a model made without validation
    if type(part) is not TextPart:
        return None
    state = _STATE_VALUES[status.state]
    # each encodes: the task's JSON was made (a lone surrogate fails that)
    message_id, stamp, text = message.message_id.encode(), timestamp.encode(), part.text.encode()
    # joined rather than ``%``-formatted: a format parses its template for every value
    whole = b"".join(
        (_TASK_ID, task_id, _CONTEXT_ID, context_id, _STATE, state, _STAMP, stamp, _OPENING,
         message_id, _ASKING, text, _TAIL_CONTEXT_ID, context_id, _TAIL_TASK_ID, task_id, _END)
    )  # fmt: skip
    if not json.startswith(whole):
        return None
    return b"".join(
        (state, _STAMP, stamp, _OPENED, message_id, _ASKED, text, b"\x01", json[len(whole) :])
    )


def _cut(pieces: list[str], task: Task) -> bytes | None:
    """What ``_short`` makes of the commonest task's JSON, made from its pieces
    (``written_pieces``) without joining them first: the first fifteen (the ids, the
    state, the history's message) give way to the raw values and codes ``_short`` leaves
    of them, the rest is joined as it is. ``None`` where ``_short`` would decline: another
    role, a message of other ids, a value that JSON escapes (its quoted piece is longer
    than the value and two quotes), an id not ASCII (only its encoding says whether it can
    be encoded, and an id is never in the record: left to ``_short``), or a lone surrogate
    in the rest (it cannot be encoded).

    Cheaper than joining and encoding the pieces (``to_json``) and then ``_short``: the
    task's JSON is never joined and encoded whole, nor its values encoded and compared
    again."""
    # ``written_pieces`` wrote it: a task of this shape, these values text
    task_id, context_id, status = task.id, task.context_id, task.status
    history: list[Message] = task.history  # type: ignore[assignment]
    stamp: str = status.timestamp  # type: ignore[assignment]
    message = history[0]
    part: TextPart = message.parts[0]  # type: ignore[assignment]
    message_id, text = message.message_id, part.text
    quoted_task_id, quoted_context_id = pieces[1], pieces[3]
    if (
        pieces[8] != _ASKING_TEXT
        or pieces[11] != quoted_context_id
        or pieces[13] != quoted_task_id
        or not task_id.isascii()
        or not context_id.isascii()
        or len(quoted_task_id) != len(task_id) + 2
        or len(quoted_context_id) != len(context_id) + 2
        or len(pieces[5]) != len(stamp) + 2
        or len(pieces[7]) != len(message_id) + 2
        or len(pieces[9]) != len(text) + 2
    ):
        return None
    pieces[:15] = (
        _STATE_TEXTS[status.state], _STAMP_TEXT, stamp, _OPENED_TEXT, message_id,
        _ASKED_TEXT, text, "\x01",
    )  # fmt: skip
    try:
        return "".join(pieces).encode()
    except UnicodeEncodeError:
        return None


def _shorten(data: bytes, task_id: bytes, context_id: bytes) -> bytes:
    prefix = _PREFIX % (task_id, context_id)
    if data.startswith(prefix):
        data = data[len(prefix) :]  # now it begins with the state, never with "{"
    data = data.replace(_TAIL % (context_id, task_id), b"\x01")
    for token, code, count in _PAIRS:
        data = data.replace(token, code, count)
    return data


def _lengthen(data: bytes, task_id: bytes, context_id: bytes) -> bytes:
    for token, code in _BACK:
        data = data.replace(code, token)
    data = data.replace(b"\x01", _TAIL % (context_id, task_id))
    if not data.startswith(b"{"):
        data = _PREFIX % (task_id, context_id) + data
    return data


# -- events told against the snapshot -----------------------------------------------


def _told(stored: StoredEvent, task: Task) -> bytes:
    """An event as a line: where the snapshot holds its pieces, or its wire JSON (made
    once: the streams that send the event share it).

    By exact type, each check written out: this runs for every event of every task
    (an event of a subclass is told as its wire JSON)."""
    event = stored.event
    if type(event) is TaskStatusUpdateEvent:
        if (
            event.task_id == task.id
            and event.context_id == task.context_id
            and event.metadata is None
            and (event.status is task.status or _same_status(event.status, task.status))
        ):
            return _STATUS_LINES[event.final]
    elif type(event) is TaskArtifactUpdateEvent:
        if (
            event.task_id == task.id
            and event.context_id == task.context_id
            and event.metadata is None
        ):
            artifact, kept = event.artifact, task.artifacts
            if kept and kept[0] is artifact:  # by identity: most often the only one
                return _FIRST_ARTIFACT_LINES[event.append, event.last_chunk]
            at = _artifact_at(artifact, kept)
            if at is not None:
                flags = _ARTIFACT_LINES[event.append, event.last_chunk]
                return flags + (_NUMBERS[at] if at < _NUMBERED else b"%d" % at)
    elif type(event) is Task:
        told = _told_task(event, task)
        if told is not None:
            return told
    elif type(event) is Message and task.history:
        for at, message in enumerate(task.history):
            if message is event:
                return b"M%d" % at
    return b"R" + stored.to_json()


def _same_status(status: TaskStatus, final: TaskStatus) -> bool:
    return status is final or (
        status.state is final.state
        and status.timestamp == final.timestamp
        and status.message is final.message
    )


def _artifact_at(artifact: Artifact, artifacts: list[Artifact] | None) -> int | None:
    if artifacts:
        artifact_id = artifact.artifact_id
        for at, kept in enumerate(artifacts):
            if kept is artifact or (
                kept.artifact_id == artifact_id and _same_artifact(artifact, kept)
            ):
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
        and _all_are(one.parts, other.parts)
    )


def _all_are(items: list[Any], kept: list[Any]) -> bool:
    """``items`` are the first of ``kept``, object by object (``map``: a generator costs
    more than the comparisons)."""
    return len(items) <= len(kept) and all(map(is_, items, kept))


def _told_task(event: Task, task: Task) -> bytes | None:
    if event.id != task.id or event.context_id != task.context_id:
        return None
    if event.metadata is not task.metadata:
        return None
    # ``_first_of``, written out: the history is most often the task's first messages
    items, kept = event.history, task.history
    history: bytes | None
    if items is None:
        history = b"n"
    elif kept and len(items) == 1 and items[0] is kept[0]:  # a send's first message
        history = b"1"
    elif kept is not None and len(items) <= len(kept) and all(map(is_, items, kept)):
        history = _NUMBERS[len(items)] if len(items) < _NUMBERED else b"%d" % len(items)
    else:
        history = _first_of(items, kept)
    told = event.artifacts
    artifacts = b"n" if told is None else _first_artifacts(told, task.artifacts)
    if history is None or artifacts is None:
        return None
    return b"T%s %s %s" % (history, artifacts, _told_status(event.status, task))


def _told_status(status: TaskStatus, task: Task) -> bytes:
    """``=``: the task's; ``~state [timestamp]``: one with no message; or its JSON."""
    final = task.status
    stamp = status.timestamp
    if status is final or (
        status.state is final.state and stamp == final.timestamp and status.message is final.message
    ):  # ``_same_status``, written out
        return b"="
    if status.message is not None or (stamp is not None and not stamp.isprintable()):
        return status.to_json()
    if stamp is None:
        return _STATE_VALUES[status.state]
    return _STATES_SPACED[status.state] + stamp.encode()


def _first_of(items: list[Any] | None, kept: list[Any] | None) -> bytes | None:
    """How many of ``kept`` ``items`` are, by identity (``b"n"``: ``items`` is
    ``None``), or ``None`` if they are not its first ones."""
    if items is None:
        return b"n"
    return b"%d" % len(items) if _all_are(items, kept or []) else None


def _first_artifacts(items: list[Artifact] | None, kept: list[Artifact] | None) -> bytes | None:
    if items is None:
        return b"n"
    kept = kept or []
    if len(items) > len(kept):
        return None
    for at, item in enumerate(items):
        if item is not kept[at] and not _same_artifact(item, kept[at]):
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
                "status": _status(status, task),
                "history": _first(task.history, history),
                "artifacts": _first(task.artifacts, artifacts),
            }
        )
    if kind == b"M":
        return (task.history or [])[int(rest)]
    return _EVENT.validate_json(rest)


def _status(told: bytes, task: Task) -> TaskStatus:
    if told == b"=":
        return task.status
    if told.startswith(b"{"):
        return TaskStatus.model_validate_json(told)
    state, _, stamp = told.partition(b" ")
    timestamp = stamp.decode() if stamp or b" " in told else None
    return TaskStatus(state=TaskState(state.decode()), timestamp=timestamp)


def _first(kept: list[Any] | None, count: bytes) -> list[Any] | None:
    return None if count == b"n" else list((kept or [])[: int(count)])
