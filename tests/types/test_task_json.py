"""``Task.to_json``: made once while the task holds still, made again once it changes."""

from __future__ import annotations

from parley.protocol import add_to_history, apply
from parley.types import (
    A2AModel,
    Artifact,
    Event,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)


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


def _artifact(text: str, artifact_id: str = "a", **fields: object) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="t",
        context_id="c",
        artifact=Artifact(artifact_id=artifact_id, parts=[TextPart(text=text)]),
        **fields,
    )


def _check(task: Task) -> bytes:
    data = task.to_json()
    assert data == _fresh(task)
    return data


def test_the_same_bytes_while_the_task_holds_still() -> None:
    task = _task()
    first = _check(task)
    assert task.to_json() is first


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
    assert shallow.to_json() == original
    assert task.to_json() is original
    assert trimmed == task.model_copy(update={"history": []})  # equality ignores what is kept
