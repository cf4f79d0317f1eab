"""``A2AModel.copied``: the server's shallow copy, as ``model_copy(update=...)`` makes it."""

from __future__ import annotations

from parley.types import Message, Role, Task, TaskState, TaskStatus, TextPart


def _task() -> Task:
    message = Message(message_id="m", role=Role.user, parts=[TextPart(text="hi")])
    return Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.working, timestamp="2026-11-23T00:00:00+00:00"),
        history=[message],
    )


def test_copied_is_model_copy_without_its_cost() -> None:
    task = _task()
    for update in ({}, {"history": None}, {"id": "u", "metadata": {"k": 1}}):
        fast, slow = task.copied(**update), task.model_copy(update=update)
        assert type(fast) is Task
        assert fast.to_json() == slow.to_json()
        assert fast.model_fields_set == slow.model_fields_set
        assert fast == slow


def test_a_copy_changes_apart_from_its_original() -> None:
    task = _task()
    copy = task.copied(history=list(task.history or []))
    copy.status = TaskStatus(state=TaskState.completed)
    assert copy.history is not None
    copy.history.append(Message(message_id="n", role=Role.agent, parts=[TextPart(text="yo")]))
    copy.metadata = {"changed": True}
    assert task.status.state is TaskState.working
    assert [m.message_id for m in task.history or []] == ["m"]
    assert task.metadata is None
    assert "metadata" not in task.model_fields_set
