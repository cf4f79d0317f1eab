"""The v1.0 JSON of the commonest finished task, written out from its values.

A send's response is its final task. The compiled writer
(``parley.protocol.v1._protojson``) writes any task, but for this one shape (an echo's,
a plain agent's answer) joining the pieces in Python costs less: the writer's C walk of
the schema is cheap, its calls back into Python for the status's time and its two enums
are not. ``written_task`` gives the writer's bytes, exactly (tests/protocol/
test_v1_written.py holds it to that), or ``None`` for any other task. This is v1.0's
twin of ``_v03_json._written``; the shape is recognised in one place
(``commonest_parts``), for both.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

from parley._speedups._v03_json import commonest_parts
from parley.types import Role, Task, TaskState

_quoted: Callable[[Any], str] = encode_basestring
"""The JSON of a ``str`` as pydantic-core writes it (``"`` and ``\\`` escaped, the control
characters as ``\\b \\f \\n \\r \\t`` or ``\\u00xx``, the rest as it is); one C call, a
``TypeError`` for anything but a ``str``."""
NOT_WRITTEN = (TypeError, KeyError, UnicodeEncodeError)
"""What ``written_task`` raises for a task the writer is to write after all."""
_STATES = {state: f"TASK_STATE_{state.name.upper()}" for state in TaskState}
_STATES[TaskState.unknown] = "TASK_STATE_UNSPECIFIED"
_ROLES = {role: f"ROLE_{role.name.upper()}" for role in Role}
"""v1.0's enum names (``parley.protocol.v1._data`` owns them; the tests hold these to the
writer's bytes)."""
_STATE_PIECES: dict[TaskState, str] = {
    state: f',"status":{{"state":"{_STATES[state]}","timestamp":'
    for state in TaskState
    if state is not TaskState.unknown  # left out (ProtoJSON's default): the writer's, a KeyError
}
_ROLE_PIECES = {role: f',"role":"{_ROLES[role]}","parts":[{{"text":' for role in Role}


def written_task(task: Task, head: str = "") -> bytes | None:
    """``task``'s v1.0 JSON (after ``head``: the one-of that carries it, ``{"task":``,
    closed here too) when it is the commonest finished task: no metadata anywhere, a
    status with no message and a time in the core's own form (``server.agent._ids.now``: UTC,
    microseconds, ``+00:00``), one message in its history (one text part, both ids,
    nothing else) and one artifact (one text part, a name, nothing else), each model of
    its own exact type. ``None`` for any other task. Raises one of ``NOT_WRITTEN`` for a
    value not of its field's type or a lone surrogate: the writer writes, or refuses,
    those (the caller catches them, which saves a call on every response)."""
    parts = commonest_parts(task)
    if parts is None:
        return None
    message, artifact, question, answer = parts
    status = task.status
    stamp: str = status.timestamp  # type: ignore[assignment]  # None: a TypeError below
    if (
        stamp[26:] != "+00:00"  # (32 characters, no more, since it ends there)
        or stamp[10] != "T"
    ):
        return None  # another time is the writer's to read (``_data.timestamp``)
    # A value the task holds twice (its ids, in the message too; an echo's text) is
    # quoted once. A ``None`` where a value is written (an id, a name) is a ``TypeError``.
    task_id, context_id, text = task.id, task.context_id, question.text
    quoted_task_id, quoted_context_id = _quoted(task_id), _quoted(context_id)
    quoted_text = _quoted(text)
    message_task_id, message_context_id, answer_text = (
        message.task_id, message.context_id, answer.text
    )  # fmt: skip
    pieces = (
        head, '{"id":', quoted_task_id,
        ',"contextId":', quoted_context_id,
        _STATE_PIECES[status.state], _quoted(stamp[:26] + "Z"),
        '},"history":[{"messageId":',
        _quoted(message.message_id),
        _ROLE_PIECES[message.role], quoted_text,
        '}],"contextId":',
        quoted_context_id if message_context_id is context_id else _quoted(message_context_id),
        ',"taskId":',
        quoted_task_id if message_task_id is task_id else _quoted(message_task_id),
        '}],"artifacts":[{"artifactId":', _quoted(artifact.artifact_id),
        ',"parts":[{"text":',
        quoted_text if answer_text is text else _quoted(answer_text),
        '}],"name":', _quoted(artifact.name),
        "}]}}" if head else "}]}",
    )  # fmt: skip
    return "".join(pieces).encode()
