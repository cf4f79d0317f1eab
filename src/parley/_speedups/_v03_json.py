"""v0.3's JSON of a task, faster than the serialiser for the tasks a send makes most.

- The commonest finished task (an echo's, a plain agent's answer) is written out from
  its values (``written_pieces``), each time: the store writes it and the response sends
  it, and joining its pieces costs less than serialising it once and checking what was
  kept at the second call.
- Any other task is serialised, and its JSON kept (``_kept``) for as long as the task
  holds still: a send's final task is written by the store and then sent back. The
  bytes are given again only while the objects they were made from (``_shape``) are
  the very same, in the same order (never by equality: ``1 == 1.0 == True`` would change
  the JSON). A copy (``copied``, ``model_copy``) is another object: it starts with none.

Both give the serialiser's bytes exactly (tests/types/test_task_json.py holds them to
that); ``task_json`` is the entry.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring
from operator import is_
from typing import Any

from parley.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus, TextPart

_serialise = Task.__pydantic_serializer__.to_json
_KEPT = 64
"""Tasks whose JSON is kept at most, the most recently written ones."""
_kept: dict[int, tuple[Task, list[Any], bytes]] = {}
"""``id(task)`` -> the task, what its JSON was made of (``_shape``), and that JSON. The
task is held, so its id names no other object while it is kept."""


def task_json(task: Task) -> bytes:
    """``task``'s v0.3 wire JSON, as ``task.to_json()`` gives it (see the module docs)."""
    pieces = written_pieces(task)
    if pieces is not None:
        try:
            return "".join(pieces).encode()
        except UnicodeEncodeError:
            pass  # a lone surrogate: the serialiser says what it says of one
    shape = _shape(task)
    key = id(task)
    kept = _kept.get(key)
    if kept is not None and len(kept[1]) == len(shape) and all(map(is_, kept[1], shape)):
        return kept[2]
    data: bytes = _serialise(task, by_alias=True, exclude_none=True)
    if kept is None and len(_kept) >= _KEPT:
        del _kept[next(iter(_kept))]  # the oldest
    _kept[key] = (task, shape, data)
    return data


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


_quoted: Callable[[Any], str] = encode_basestring
"""The JSON of a ``str``, as pydantic-core writes it: ``"`` and ``\\`` escaped, the control
characters as ``\\b \\f \\n \\r \\t`` or ``\\u00xx``, everything else as it is (UTF-8 once
encoded); one C call, a ``TypeError`` for anything but a ``str``."""
_STATES = {state: f',"status":{{"state":"{state.value}","timestamp":' for state in TaskState}
_ROLES = {role: f',"role":"{role.value}","parts":[{{"kind":"text","text":' for role in Role}


def written_pieces(task: Task) -> list[str] | None:
    """The wire JSON of the commonest finished task, as the serialiser writes it (a test
    holds it to that, byte for byte), in pieces to join: no metadata anywhere, a status
    with a timestamp and no message, one message in its history (one text part, both
    ids, nothing else) and one artifact (one text part, a name, nothing else), each model
    of its own exact type, the task itself a ``Task``; or such a task with no artifact
    (begun: a stream's first event) or an artifact of several text parts (a stream's
    chunks). ``None`` for any other task, and for a value not of its field's type
    (serialised then).

    Every value is one piece, quoted (``_quoted``), and so is every run of JSON between
    two values; the first fifteen pieces are always these (the memory store's record
    cuts and shortens them, ``parley._speedups._memory_pack``): the task's id and context
    id (1, 3), its state (4, with the JSON around it), the status's timestamp (5), the
    message's id (7), its role (8, with the JSON around it), its text (9), its context
    id and task id (11, 13), and the ``}`` that ends the message (14)."""
    try:
        return _written(task) or _written_streamed(task)
    except (TypeError, KeyError):  # a ``None`` where text is written: not this shape
        return None


def commonest_parts(task: Task) -> tuple[Message, Artifact, TextPart, TextPart] | None:
    """The message of ``task``'s history, its artifact, and the text part of each, when
    ``task`` is the commonest finished task (an echo's, a plain agent's answer): no
    metadata anywhere, a status with no message, one message in its history (one text
    part, its ids, nothing else) and one artifact (one text part, a name, nothing else),
    each model of its own exact type. ``None`` for any other task.

    Each wire form writes this shape out from its values: v0.3's here (``_written``),
    v1.0's in ``_v1_json``."""
    status, history, artifacts = task.status, task.history, task.artifacts
    if (
        type(task) is not Task  # a subclass may have fields of its own
        or type(status) is not TaskStatus
        or status.message is not None
        or type(history) is not list
        or len(history) != 1
        or type(artifacts) is not list
        or len(artifacts) != 1
        or task.metadata is not None
        or task.kind != "task"
    ):
        return None
    message, artifact = history[0], artifacts[0]
    if type(message) is not Message or type(artifact) is not Artifact:
        return None
    asked, told = message.parts, artifact.parts
    if (
        message.metadata is not None
        or message.reference_task_ids is not None
        or message.extensions is not None
        or type(asked) is not list
        or len(asked) != 1
        or message.kind != "message"
        or artifact.metadata is not None
        or artifact.description is not None
        or artifact.extensions is not None
        or type(told) is not list
        or len(told) != 1
    ):
        return None
    question, answer = asked[0], told[0]
    if (
        type(question) is not TextPart
        or type(answer) is not TextPart
        or question.metadata is not None
        or answer.metadata is not None
        or question.kind != "text"
        or answer.kind != "text"
        or type(status.state) is not TaskState
        or type(message.role) is not Role
    ):
        return None
    return message, artifact, question, answer


def _written(task: Task) -> list[str] | None:
    parts = commonest_parts(task)
    if parts is None:
        return None
    message, artifact, question, answer = parts
    status = task.status
    state, role = status.state, message.role
    # A value the task holds twice (its ids, in the message too; an echo's text) is
    # quoted once. A ``None`` where a value is written (a timestamp, an id, a name) is
    # a ``TypeError``: serialised then.
    task_id, context_id, text = task.id, task.context_id, question.text
    quoted_task_id, quoted_context_id = _quoted(task_id), _quoted(context_id)
    quoted_text = _quoted(text)
    message_task_id, message_context_id, answer_text = (
        message.task_id, message.context_id, answer.text
    )  # fmt: skip
    return [
        '{"kind":"task","id":', quoted_task_id,
        ',"contextId":', quoted_context_id,
        _STATES[state], _quoted(status.timestamp),
        '},"history":[{"kind":"message","messageId":', _quoted(message.message_id),
        _ROLES[role], quoted_text,
        '}],"contextId":',
        quoted_context_id if message_context_id is context_id else _quoted(message_context_id),
        ',"taskId":',
        quoted_task_id if message_task_id is task_id else _quoted(message_task_id),
        "}",
        '],"artifacts":[{"artifactId":', _quoted(artifact.artifact_id),
        ',"parts":[{"kind":"text","text":',
        quoted_text if answer_text is text else _quoted(answer_text),
        '}],"name":', _quoted(artifact.name),
        "}]}",
    ]  # fmt: skip


def _written_streamed(task: Task) -> list[str] | None:
    """``_written``'s JSON for a task of its shape but for its artifact: none (a task
    begun: a stream's first event), or one of several text parts (a stream's chunks).
    Apart from ``_written``, which stays as short as the commonest task allows."""
    status, history, artifacts = task.status, task.history, task.artifacts
    if (
        type(task) is not Task  # a subclass may have fields of its own
        or type(status) is not TaskStatus
        or status.message is not None
        or type(history) is not list
        or len(history) != 1
        or task.metadata is not None
        or task.kind != "task"
    ):
        return None
    message = history[0]
    if type(message) is not Message:
        return None
    asked = message.parts
    if (
        message.metadata is not None
        or message.reference_task_ids is not None
        or message.extensions is not None
        or type(asked) is not list
        or len(asked) != 1
        or message.kind != "message"
    ):
        return None
    question = asked[0]
    state, role = status.state, message.role
    if (
        type(question) is not TextPart
        or question.metadata is not None
        or question.kind != "text"
        or type(state) is not TaskState
        or type(role) is not Role
    ):
        return None
    if artifacts is None:  # a task begun (a stream's first event)
        told: list[Part] | None = None
    else:
        told = _told(artifacts)
        if told is None:
            return None
    # A value the task holds twice (its ids, in the message too; an echo's text) is
    # quoted once. A ``None`` where a value is written (a timestamp, an id, a name) is
    # a ``TypeError``: serialised then.
    task_id, context_id, text = task.id, task.context_id, question.text
    quoted_task_id, quoted_context_id = _quoted(task_id), _quoted(context_id)
    quoted_text = _quoted(text)
    message_task_id, message_context_id = message.task_id, message.context_id
    pieces = [
        '{"kind":"task","id":', quoted_task_id,
        ',"contextId":', quoted_context_id,
        _STATES[state], _quoted(status.timestamp),
        '},"history":[{"kind":"message","messageId":', _quoted(message.message_id),
        _ROLES[role], quoted_text,
        '}],"contextId":',
        quoted_context_id if message_context_id is context_id else _quoted(message_context_id),
        ',"taskId":',
        quoted_task_id if message_task_id is task_id else _quoted(message_task_id),
        "}",
    ]  # fmt: skip
    if told is None:
        pieces.append("]}")
        return pieces
    artifact = artifacts[0]  # type: ignore[index]
    answer_text = told[0].text  # type: ignore[union-attr]
    quoted_answer = quoted_text if answer_text is text else _quoted(answer_text)
    pieces += (
        '],"artifacts":[{"artifactId":', _quoted(artifact.artifact_id),
        ',"parts":[{"kind":"text","text":', quoted_answer,
    )  # fmt: skip
    for part in told[1:]:  # the chunks of a stream, each a part
        pieces += ('},{"kind":"text","text":', _quoted(part.text))  # type: ignore[union-attr]
    pieces += ('}],"name":', _quoted(artifact.name), "}]}")
    return pieces


def _told(artifacts: list[Artifact]) -> list[Part] | None:
    """The parts of the task's one artifact, if they are text parts and it holds nothing
    else but its id and name (``None`` otherwise: serialised then)."""
    if type(artifacts) is not list or len(artifacts) != 1:
        return None
    artifact = artifacts[0]
    if (
        type(artifact) is not Artifact
        or artifact.metadata is not None
        or artifact.description is not None
        or artifact.extensions is not None
    ):
        return None
    told = artifact.parts
    if type(told) is not list or not told:
        return None
    for part in told:
        if type(part) is not TextPart or part.metadata is not None or part.kind != "text":
            return None
    return told
