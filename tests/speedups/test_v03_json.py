"""``task_json`` (``parley._speedups``): the commonest finished task written out from its
values; any other serialised once while the task holds still, and again once it
changes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley._speedups._v03_json import task_json, written_pieces
from parley.protocol import add_to_history, apply
from parley.types import (
    A2AModel,
    Artifact,
    DataPart,
    Event,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from tests.types.shapes import TEXTS, finished, with_nested_metadata


def _task() -> Task:
    message = Message(message_id="m", role=Role.user, parts=[TextPart(text="hi")])
    return Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.working, timestamp="2026-11-23T00:00:00+00:00"),
        history=[message],
    )


def _fresh(task: Task) -> bytes:
    """The task's JSON made now, with nothing kept."""
    return A2AModel.to_json(task)


def _written(task: Task) -> bytes | None:
    """The task's JSON as ``written_pieces`` writes it (``None``: it does not)."""
    pieces = written_pieces(task)
    return None if pieces is None else "".join(pieces).encode()


def _artifact(text: str, artifact_id: str = "a", **fields: object) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="t",
        context_id="c",
        artifact=Artifact(artifact_id=artifact_id, parts=[TextPart(text=text)]),
        **fields,
    )


def _check(task: Task) -> bytes:
    data = task_json(task)
    assert data == _fresh(task)
    return data


def test_the_same_bytes_while_the_task_holds_still() -> None:
    task = _task()
    first = _check(task)
    assert task_json(task) is first


def test_every_change_apply_makes_is_seen() -> None:
    task = _task()
    seen = [_check(task)]
    changes: list[Event] = [
        _artifact("one"),
        _artifact(" two", append=True),  # parts added to the artifact in place
        _artifact("three", metadata={"k": 1}),  # replaced
        _artifact("four", artifact_id="b"),
        TaskStatusUpdateEvent(
            task_id="t",
            context_id="c",
            status=TaskStatus(
                state=TaskState.input_required,
                message=Message(message_id="q", role=Role.agent, parts=[TextPart(text="?")]),
            ),
            final=False,
        ),
        TaskStatusUpdateEvent(  # the question joins the history
            task_id="t", context_id="c", status=TaskStatus(state=TaskState.working), final=False
        ),
        Message(message_id="n", role=Role.user, parts=[TextPart(text="more")]),
    ]
    for event in changes:
        applied = apply(task, event)
        assert applied is task
        data = _check(task)
        assert data not in seen
        seen.append(data)


def test_an_artifact_merging_metadata_in_place_is_seen() -> None:
    task = _task()
    apply(task, _artifact("x", metadata={"a": 1}))
    before = _check(task)
    appended = _artifact("y", append=True)
    appended.artifact.metadata = {"b": 2}
    apply(task, appended)
    assert _check(task) != before


def test_a_value_swapped_for_an_equal_one_is_seen() -> None:
    """``1 == True``, but their JSON differs: pieces are compared by identity."""
    task = _task()
    task.metadata = {"flag": 1}
    assert b'"flag":1' in _check(task)
    task.metadata = {"flag": True}
    assert b'"flag":true' in _check(task)


def test_fields_set_directly_are_seen() -> None:
    task = _task()
    _check(task)
    task.status = task.status.copied(state=TaskState.completed)
    assert b'"completed"' in _check(task)
    add_to_history(task, Message(message_id="z", role=Role.agent, parts=[TextPart(text="z")]))
    assert b'"z"' in _check(task)
    assert task.history is not None
    task.history[0] = Message(message_id="y", role=Role.user, parts=[TextPart(text="y")])
    assert b'"messageId":"m"' not in _check(task)


def test_copies_make_their_own() -> None:
    task = _task()
    original = _check(task)
    trimmed = task.model_copy(update={"history": []})
    assert _check(trimmed) != original
    shallow = task.copied()
    assert task_json(shallow) == original
    assert task_json(task) is original
    assert trimmed == task.model_copy(update={"history": []})  # equality ignores what is kept


# -- the commonest finished task, written out (``written_pieces``) ---------------------


@given(
    text=st.text(),
    answer=st.none() | st.text(),
    ids=st.tuples(st.text(), st.text(), st.text(), st.text()),
    state=st.sampled_from(TaskState),
    stamp=st.text(),
)
def test_the_commonest_task_is_written_as_the_serialiser_writes_it(
    text: str, answer: str | None, ids: tuple[str, str, str, str], state: TaskState, stamp: str
) -> None:
    task = finished(text, answer, ids, state, stamp=stamp)
    try:
        expected = _fresh(task)
    except ValueError:  # a lone surrogate: no JSON holds it
        with pytest.raises(ValueError, match="surrogates not allowed"):
            task_json(task)
        return
    assert _written(task) == expected
    assert task_json(task) == expected


def test_the_first_pieces_are_the_values_the_memory_store_cuts() -> None:
    """``parley._speedups._memory_pack._cut`` reads the values at these places."""
    task = finished("hello", ids=("t1", "c1", "m1", "a1"), stamp="then")
    pieces = written_pieces(task)
    assert pieces is not None
    values = {1: '"t1"', 3: '"c1"', 5: '"then"', 7: '"m1"', 9: '"hello"', 11: '"c1"', 13: '"t1"'}
    assert {at: pieces[at] for at in values} == values
    assert pieces[4] == ',"status":{"state":"completed","timestamp":'
    assert pieces[8] == ',"role":"user","parts":[{"kind":"text","text":'
    assert pieces[14] == "}"


@given(
    text=st.text(),
    chunks=st.none() | st.lists(st.text(), min_size=1, max_size=4),
    state=st.sampled_from(TaskState),
)
def test_a_task_begun_or_streamed_is_written_as_the_serialiser_writes_it(
    text: str, chunks: list[str] | None, state: TaskState
) -> None:
    """No artifact yet (a stream's first event), or one of several text parts (its
    chunks): written out too."""
    task = finished(text, state=state)
    if chunks is None:
        task = task.model_copy(update={"artifacts": None})
    else:
        parts: list[Part] = [TextPart(text=chunk) for chunk in chunks]
        artifact = Artifact(artifact_id="a", parts=parts, name="response")
        task = task.model_copy(update={"artifacts": [artifact]})
    try:
        expected = _fresh(task)
    except ValueError:  # a lone surrogate: no JSON holds it
        return
    assert _written(task) == expected
    assert task_json(task) == expected


@pytest.mark.parametrize("text", TEXTS)
def test_texts_that_json_escapes(text: str) -> None:
    task = finished(text, ids=(text, text + "c", text + "m", text + "a"), stamp=text)
    assert _written(task) == _fresh(task)


def test_a_task_of_another_shape_is_serialised() -> None:
    """Anything ``written_pieces`` does not write is left to the serialiser, and kept."""
    message = Message(message_id="q", role=Role.agent, parts=[TextPart(text="?")])
    others: list[Task] = [_task()]  # no artifact
    changes: list[dict[str, object]] = [
        {"metadata": {"k": 1}},
        {"status": TaskStatus(state=TaskState.input_required, message=message)},
        {"history": [message, message]},
        {"history": []},
        {"artifacts": []},
        {"artifacts": [Artifact(artifact_id="a", parts=[TextPart(text="x"), DataPart(data={})])]},
    ]
    others += [finished().model_copy(update=change) for change in changes]
    others += with_nested_metadata(finished)
    for task in others:
        assert _written(task) is None
        data = _check(task)
        assert task_json(task) is data


def test_values_not_of_their_fields_types_are_serialised() -> None:
    """A ``None`` or another type where the writer expects text (models built without
    validation) is the serialiser's to write, or refuse."""
    for change in ({"name": None}, {"task_id": None}, {"timestamp": None}):
        task = finished()
        assert task.history is not None
        assert task.artifacts is not None
        field, value = next(iter(change.items()))
        holder = {"name": task.artifacts[0], "task_id": task.history[0], "timestamp": task.status}
        holder[field].__dict__[field] = value
        assert task_json(task) == _fresh(task)
    task = finished()
    task.__dict__["id"] = 5
    with pytest.warns(UserWarning, match="Expected `str`"):
        assert task_json(task) == _fresh(task)


def test_a_subclass_is_left_to_the_serialiser() -> None:
    """A subclass may have fields of its own: never written out as a ``Task``."""

    class LabelledTask(Task):
        label: str = "mine"

    assert _written(LabelledTask.model_validate(finished().model_dump())) is None


def test_a_lone_surrogate_is_refused_as_the_serialiser_refuses_it() -> None:
    """No JSON can hold it: the written form gives way to the serialiser, which says so."""
    with pytest.raises(ValueError, match="surrogates not allowed"):
        finished("\ud800").to_json()
