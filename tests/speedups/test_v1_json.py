"""The commonest finished task's v1.0 JSON, written out (``parley._speedups._v1_json``):
byte for byte what the compiled writer (``_protojson``) writes, and ``None`` (or one of
``NOT_WRITTEN``) for anything else."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_core import PydanticSerializationError

from parley._speedups._v1_json import NOT_WRITTEN
from parley._speedups._v1_json import written_task as _written_task
from parley.protocol.v1._protojson import _WRITERS, event_json, to_v1_json
from parley.types import Message, Role, Task, TaskState, TaskStatus, TextPart
from tests.bindings.strategies import tasks
from tests.types.shapes import STAMP, TEXTS, finished, with_nested_metadata

# The core's own times (``server.agent._ids.now``), and others the writer reads itself
core_stamps = st.datetimes(timezones=st.just(UTC)).map(
    lambda moment: moment.isoformat(timespec="microseconds")
)
stamps = core_stamps | st.text() | st.sampled_from([STAMP[:26] + "Z", STAMP[:19] + "+02:00"])


def written_task(task: Task, head: str = "") -> bytes | None:
    """``_written.written_task``, with what it raises for the writer as ``None``."""
    try:
        return _written_task(task, head)
    except NOT_WRITTEN:
        return None


def _writer(task: Task) -> bytes:
    """The compiled writer's bytes for ``task``."""
    data: bytes = _WRITERS[Task].to_json(task, by_alias=True, exclude_none=True)
    return data


def _same_as_the_writer(task: Task) -> None:
    """Written out or not, ``to_v1_json`` and ``event_json`` give the writer's bytes, or
    refuse as it refuses."""
    try:
        expected = _writer(task)
    except (ValueError, PydanticSerializationError):  # a lone surrogate, a bad time
        assert written_task(task) is None
        return
    written = written_task(task)
    assert written is None or written == expected
    assert to_v1_json(task) == expected
    assert event_json(task) == b'{"task":%s}' % expected


@given(
    text=st.text(),
    answer=st.none() | st.text(),
    ids=st.tuples(st.text(), st.text(), st.text(), st.text()),
    state=st.sampled_from(TaskState),
    role=st.sampled_from(Role),
    stamp=stamps,
)
def test_the_commonest_task_is_written_as_the_writer_writes_it(
    text: str,
    answer: str | None,
    ids: tuple[str, str, str, str],
    state: TaskState,
    role: Role,
    stamp: str,
) -> None:
    task = finished(text, answer, ids, state, role, stamp)
    _same_as_the_writer(task)


@given(stamp=core_stamps)
def test_a_time_in_the_cores_form_is_written_out(stamp: str) -> None:
    task = finished(stamp=stamp)
    assert written_task(task) == _writer(task)
    assert written_task(task, '{"task":') == b'{"task":%s}' % _writer(task)


@pytest.mark.parametrize(
    "stamp",
    [
        STAMP.replace("T", " "),  # read and written again by the writer
        "0" + STAMP,  # ends as the core's time does, but longer
        STAMP[1:],
        STAMP[:26] + "-00:00",
        STAMP[:19] + ".1234567+00:00",
    ],
)
def test_a_time_not_in_the_cores_form_is_the_writers(stamp: str) -> None:
    task = finished(stamp=stamp)
    assert written_task(task) is None
    _same_as_the_writer(task)


def test_a_time_is_quoted_as_the_writer_quotes_it() -> None:
    """The writer takes the same 32 characters as the core's form (``_data.timestamp``)."""
    task = finished(stamp='"\\' + STAMP[2:])
    assert written_task(task) == _writer(task)
    assert b'"timestamp":"\\"\\\\26-11-24T16:00:00.000000Z"' in _writer(task)


@given(task=tasks)
def test_any_task_gives_the_writers_bytes(task: Task) -> None:
    _same_as_the_writer(task)


@pytest.mark.parametrize("text", TEXTS)
def test_texts_that_json_escapes(text: str) -> None:
    task = finished(text, ids=(text, text + "c", text + "m", text + "a"))
    assert written_task(task) == _writer(task)


def _others() -> list[Task]:
    message = Message(message_id="q", role=Role.agent, parts=[TextPart(text="?")])
    changes: list[dict[str, Any]] = [
        {"metadata": {"k": 1}},
        {"status": TaskStatus(state=TaskState.input_required, message=message)},
        {"status": TaskStatus(state=TaskState.completed)},  # no time
        {"status": TaskStatus(state=TaskState.completed, timestamp=STAMP[:19] + "Z")},
        {"history": [message, message]},
        {"history": []},
        {"history": None},
        {"artifacts": None},
    ]
    others = [finished().model_copy(update=change) for change in changes]
    others += with_nested_metadata(finished)
    return others


@pytest.mark.parametrize("task", _others())
def test_a_task_of_another_shape_is_left_to_the_writer(task: Task) -> None:
    assert written_task(task) is None
    _same_as_the_writer(task)


def test_values_not_of_their_fields_types_are_left_to_the_writer() -> None:
    """A ``None`` or another type where text is written (models built without
    validation) is the writer's to write, or refuse."""
    for field in ("name", "task_id", "message_id"):
        task = finished()
        assert task.history is not None
        assert task.artifacts is not None
        holder = {"name": task.artifacts[0], "task_id": task.history[0]}
        holder.get(field, task.history[0]).__dict__[field] = None
        assert written_task(task) is None
        _same_as_the_writer(task)


def test_a_subclass_is_left_to_the_writer() -> None:
    class LabelledTask(Task):
        label: str = "mine"

    assert written_task(LabelledTask.model_validate(finished().model_dump())) is None


def test_a_lone_surrogate_is_left_to_the_writer() -> None:
    assert written_task(finished("\ud800")) is None
