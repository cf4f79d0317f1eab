"""The TaskStore contract, run against every store: memory, SQLite file, PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from parley.protocol import is_terminal
from parley.stores import SentMessage, StoredEvent, TaskStore
from parley.types import (
    Artifact,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)


def _task(task_id: str = "t1", state: TaskState = TaskState.submitted) -> Task:
    return Task(id=task_id, context_id="c1", status=TaskStatus(state=state))


def _status(state: TaskState, task_id: str = "t1") -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=task_id, context_id="c1", status=TaskStatus(state=state), final=is_terminal(state)
    )


def _chunk(text: str, append: bool) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(artifact_id="a1", parts=[TextPart(text=text)]),
        append=append,
    )


def _reply(text: str) -> Message:
    return Message(message_id="r1", role=Role.agent, parts=[TextPart(text=text)])


async def test_unknown_task(store: TaskStore) -> None:
    assert await store.get("nope") is None
    assert await store.events("nope") == []
    await store.delete("nope")


async def test_get_folds_the_events_logged_after_the_snapshot(store: TaskStore) -> None:
    await store.append("t1", [StoredEvent(1, _task())])
    await store.append("t1", [StoredEvent(2, _status(TaskState.working))])
    await store.append(
        "t1", [StoredEvent(3, _chunk("a", False)), StoredEvent(4, _chunk("b", True))]
    )
    snapshot = await store.get("t1")
    assert snapshot is not None
    assert snapshot.sequence == 4
    assert snapshot.task.status.state is TaskState.working
    assert snapshot.task.artifacts is not None
    assert [p.text for p in snapshot.task.artifacts[0].parts] == ["a", "b"]  # type: ignore[union-attr]
    await store.save(snapshot.task, 4)
    await store.append("t1", [StoredEvent(5, _status(TaskState.input_required))])
    later = await store.get("t1")
    assert later is not None
    assert (later.sequence, later.task.status.state) == (5, TaskState.input_required)


async def test_events_after_a_position_in_order(store: TaskStore) -> None:
    await store.append("t1", [StoredEvent(1, _task())])
    await store.append("t1", [StoredEvent(i, _chunk(str(i), i > 2)) for i in range(2, 12)])
    assert [e.sequence for e in await store.events("t1")] == list(range(1, 12))
    assert [e.sequence for e in await store.events("t1", after=7)] == [8, 9, 10, 11]
    event = (await store.events("t1", after=4))[0].event
    assert isinstance(event, TaskArtifactUpdateEvent)
    assert event.artifact.parts[0].text == "5"  # type: ignore[union-attr]


async def test_terminal_snapshot_is_the_whole_truth(store: TaskStore) -> None:
    await store.append(
        "t1", [StoredEvent(1, _task()), StoredEvent(2, _status(TaskState.completed))]
    )
    done = await store.get("t1")
    assert done is not None
    await store.save(done.task, done.sequence)
    again = await store.get("t1")
    assert again is not None
    assert (again.sequence, again.task.status.state) == (2, TaskState.completed)
    assert await store.active() == []


async def test_active_lists_tasks_an_agent_was_running_on(store: TaskStore) -> None:
    await store.append("t1", [StoredEvent(1, _task("t1"))])
    await store.append(
        "t2", [StoredEvent(1, _task("t2")), StoredEvent(2, _status(TaskState.working, "t2"))]
    )
    await store.append(
        "t3", [StoredEvent(1, _task("t3")), StoredEvent(2, _status(TaskState.input_required, "t3"))]
    )
    await store.save(_task("t4", TaskState.working), 1)
    await store.append("t2", [StoredEvent(3, _chunk("x", False))])  # no state: still working
    assert sorted(await store.active()) == ["t1", "t2", "t4"]


async def test_delete_forgets_task_events_and_sent_messages(store: TaskStore) -> None:
    await store.claim_message("c1", "m1", "t1")
    await store.append("t1", [StoredEvent(1, _task())])
    await store.save(_task(), 1)
    await store.delete("t1")
    assert await store.get("t1") is None
    assert await store.events("t1") == []
    assert await store.find_message("c1", "m1") is None


async def test_claim_message_is_first_come(store: TaskStore) -> None:
    assert await store.find_message("c1", "m1") is None
    assert await store.claim_message("c1", "m1", "t1") is None
    assert await store.claim_message("c1", "m1", "t2") == SentMessage("t1")
    assert await store.claim_message("c2", "m1", "t3") is None  # another scope
    assert await store.find_message("c1", "m1") == SentMessage("t1")
    await store.save_reply("c1", "m1", _reply("hi"))
    found = await store.find_message("c1", "m1")
    assert found is not None
    assert found.task_id == "t1"
    assert found.reply == _reply("hi")


async def test_a_repeated_sequence_never_overwrites_stored_events(store: TaskStore) -> None:
    await store.append("t1", [StoredEvent(1, _task()), StoredEvent(2, _chunk("kept", False))])
    with pytest.raises(ValueError, match="already has an event numbered 2") as refused:
        await store.append("t1", [StoredEvent(2, _chunk("intruder", False))])
    assert "intruder" not in str(refused.value)
    logged = await store.events("t1", after=1)
    assert len(logged) == 1
    first = logged[0].event
    assert isinstance(first, TaskArtifactUpdateEvent)
    assert first.artifact.parts[0].text == "kept"  # type: ignore[union-attr]


async def test_expire_removes_old_terminal_and_waiting_tasks(store: TaskStore) -> None:
    for task_id, state in [
        ("done", TaskState.completed),
        ("waiting", TaskState.input_required),
        ("running", TaskState.working),
    ]:
        await store.claim_message("c1", f"m-{task_id}", task_id)
        await store.append(task_id, [StoredEvent(1, _task(task_id, state))])
        await store.save(_task(task_id, state), 1)
    await store.claim_message("c1", "m-reply", "never-stored")
    past = datetime.now(UTC) - timedelta(hours=1)
    future = datetime.now(UTC) + timedelta(seconds=5)
    assert await store.expire(ended_before=past, waiting_before=past) == 0
    assert await store.expire(ended_before=future, waiting_before=past) == 1
    assert await store.get("done") is None
    assert await store.find_message("c1", "m-done") is None
    assert await store.find_message("c1", "m-reply") is None
    assert await store.expire(ended_before=future, waiting_before=future) == 1
    assert await store.get("waiting") is None
    assert await store.get("running") is not None  # a running task never expires
    assert await store.find_message("c1", "m-running") == SentMessage("running")


@pytest.mark.parametrize("count", [3])
async def test_many_tasks_are_independent(store: TaskStore, count: int) -> None:
    for n in range(count):
        await store.append(f"t{n}", [StoredEvent(1, _task(f"t{n}"))])
    for n in range(count):
        snapshot = await store.get(f"t{n}")
        assert snapshot is not None
        assert snapshot.task.id == f"t{n}"
