"""The store contract, run against every store: memory, SQLite file, PostgreSQL."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from parley.protocol import is_terminal
from parley.stores import (
    Append,
    LeaseLostError,
    OutboxEntry,
    SentMessage,
    Store,
    StoredEvent,
)
from parley.types import (
    Artifact,
    Message,
    PushNotificationConfig,
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


async def test_unknown_task(store: Store) -> None:
    assert await store.get("nope") is None
    assert await store.events("nope") == []
    await store.delete("nope")


async def test_get_folds_the_events_logged_after_the_snapshot(store: Store) -> None:
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


async def test_events_after_a_position_in_order(store: Store) -> None:
    await store.append("t1", [StoredEvent(1, _task())])
    await store.append("t1", [StoredEvent(i, _chunk(str(i), i > 2)) for i in range(2, 12)])
    assert [e.sequence for e in await store.events("t1")] == list(range(1, 12))
    assert [e.sequence for e in await store.events("t1", after=7)] == [8, 9, 10, 11]
    event = (await store.events("t1", after=4))[0].event
    assert isinstance(event, TaskArtifactUpdateEvent)
    assert event.artifact.parts[0].text == "5"  # type: ignore[union-attr]


async def test_terminal_snapshot_is_the_whole_truth(store: Store) -> None:
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


async def test_active_lists_tasks_an_agent_was_running_on(store: Store) -> None:
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


async def test_delete_forgets_task_events_and_sent_messages(store: Store) -> None:
    await store.claim_message("c1", "m1", "t1")
    await store.append("t1", [StoredEvent(1, _task())])
    await store.save(_task(), 1)
    await store.delete("t1")
    assert await store.get("t1") is None
    assert await store.events("t1") == []
    assert await store.find_message("c1", "m1") is None


async def test_claim_message_is_first_come(store: Store) -> None:
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


async def test_a_repeated_sequence_never_overwrites_stored_events(store: Store) -> None:
    await store.append("t1", [StoredEvent(1, _task()), StoredEvent(2, _chunk("kept", False))])
    with pytest.raises(ValueError, match="already has an event numbered 2") as refused:
        await store.append("t1", [StoredEvent(2, _chunk("intruder", False))])
    assert "intruder" not in str(refused.value)
    logged = await store.events("t1", after=1)
    assert len(logged) == 1
    first = logged[0].event
    assert isinstance(first, TaskArtifactUpdateEvent)
    assert first.artifact.parts[0].text == "kept"  # type: ignore[union-attr]


async def test_a_long_append_is_stored_whole_or_not_at_all(store: Store) -> None:
    # More events than one SQLite INSERT takes (its rows go in several statements).
    chunks = [StoredEvent(n, _chunk(f"c{n}", n > 2)) for n in range(2, 42)]
    await store.append("t1", [StoredEvent(1, _task()), *chunks])
    logged = await store.events("t1")
    assert [e.sequence for e in logged] == list(range(1, 42))
    assert [e.event for e in logged[1:]] == [c.event for c in chunks]
    overlapping = [StoredEvent(n, _chunk(f"again {n}", True)) for n in range(30, 70)]
    with pytest.raises(ValueError, match="already has an event numbered 30"):
        await store.append("t1", overlapping)
    assert await store.last_sequence("t1") == 41
    assert [e.event for e in await store.events("t1", after=1)] == [c.event for c in chunks]


async def test_expire_removes_old_terminal_and_waiting_tasks(store: Store) -> None:
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
async def test_many_tasks_are_independent(store: Store, count: int) -> None:
    for n in range(count):
        await store.append(f"t{n}", [StoredEvent(1, _task(f"t{n}"))])
    for n in range(count):
        snapshot = await store.get(f"t{n}")
        assert snapshot is not None
        assert snapshot.task.id == f"t{n}"


async def test_event_logs_are_kept_as_long_as_the_task(store: Store) -> None:
    """Memory and SQL keep a finished task's events alike (Last-Event-ID replay, spec 7.9)."""
    await store.append(
        "t1", [StoredEvent(1, _task()), StoredEvent(2, _status(TaskState.completed))]
    )
    await store.save(_task("t1", TaskState.completed), 2)
    assert [e.sequence for e in await store.events("t1")] == [1, 2]
    assert await store.last_sequence("t1") == 2
    assert await store.last_sequence("nope") == 0
    with pytest.raises(ValueError, match="already has an event numbered 2"):
        await store.append("t1", [StoredEvent(2, _status(TaskState.failed))])
    await store.delete("t1")
    assert await store.events("t1") == []


async def test_owner_is_stored_and_kept(store: Store) -> None:
    await store.append("t1", [StoredEvent(1, _task())])
    await store.save(_task(), 1, owner="alice")
    await store.save(_task("t1", TaskState.completed), 1)  # no owner given: kept
    snapshot = await store.get("t1")
    assert snapshot is not None
    assert snapshot.owner == "alice"
    await store.append("t2", [StoredEvent(1, _task("t2"))])
    other = await store.get("t2")
    assert other is not None
    assert other.owner is None


async def test_a_released_claim_can_be_made_again(store: Store) -> None:
    assert await store.claim_message("c1", "m1", "t1") is None
    await store.release_message("c1", "m1")
    assert await store.find_message("c1", "m1") is None
    assert await store.claim_message("c1", "m1", "t2") is None


async def test_push_configs_per_task(store: Store) -> None:
    """tasks/pushNotificationConfig/set, get, list, delete (spec 7.5-7.8) keep these."""
    first = PushNotificationConfig(url="https://a.example/hook", id="one", token="x")
    await store.set_push_config("t1", first)
    await store.set_push_config("t1", PushNotificationConfig(url="https://b.example/hook"))
    await store.set_push_config("t2", PushNotificationConfig(url="https://c.example/hook"))
    assert await store.get_push_config("t1", "one") == first
    assert await store.get_push_config("t1", "nope") is None
    unnamed = await store.get_push_config("t1", "t1")  # no id: the task's own
    assert unnamed is not None
    assert unnamed.url == "https://b.example/hook"
    replaced = PushNotificationConfig(url="https://a.example/new", id="one")
    await store.set_push_config("t1", replaced)
    assert [c.url for c in await store.list_push_configs("t1")] == [
        "https://a.example/new",
        "https://b.example/hook",
    ]
    assert await store.delete_push_config("t1", "one") is True
    assert await store.delete_push_config("t1", "one") is False
    await store.append("t2", [StoredEvent(1, _task("t2"))])
    await store.delete("t2")
    assert await store.list_push_configs("t2") == []


async def test_push_configs_keep_the_version_they_were_set_in(store: Store) -> None:
    """What each notification's shape follows (v1.0.1 §4.3.3: v1.0 configs get v1.0)."""
    await store.set_push_config("t1", PushNotificationConfig(url="https://a.example", id="a"))
    new = PushNotificationConfig(url="https://b.example", id="b")
    await store.set_push_config("t1", new, "1.0")
    await store.set_push_config("t2", PushNotificationConfig(url="https://c.example"), "1.0")
    assert await store.push_config_versions("t1") == {"a": "0.3", "b": "1.0"}
    assert list(await store.push_config_versions("t1")) == ["a", "b"]  # the order set
    assert await store.push_config_versions("t2") == {"t2": "1.0"}
    await store.set_push_config(
        "t1", PushNotificationConfig(url="https://a.example/2", id="a"), "1.0"
    )
    assert await store.push_config_versions("t1") == {"a": "1.0", "b": "1.0"}  # replaced
    assert await store.get_push_config("t1", "b") == new
    await store.delete_push_config("t1", "a")
    assert await store.push_config_versions("t1") == {"b": "1.0"}
    assert await store.push_config_versions("nope") == {}


def _delivery(sequence: int, task_id: str = "t1") -> OutboxEntry:
    return OutboxEntry(task_id, "hook", sequence, f'{{"n":{sequence}}}')


async def test_outbox_entries_are_written_with_their_event(store: Store) -> None:
    await store.append("t1", [StoredEvent(1, _task())], outbox=[_delivery(1)])
    with pytest.raises(
        ValueError, match="already has"
    ):  # the event is refused: its delivery is not written
        await store.append("t1", [StoredEvent(1, _task())], outbox=[_delivery(99)])
    due = await store.outbox_due(time.time())
    assert [(e.task_id, e.sequence, e.payload, e.attempts) for e in due] == [
        ("t1", 1, '{"n":1}', 0)
    ]
    await store.outbox_retry(due[0].id, time.time() + 3600)
    assert await store.outbox_due(time.time()) == []
    later = await store.outbox_due(time.time() + 7200)
    assert [(e.id, e.attempts) for e in later] == [(due[0].id, 1)]
    await store.outbox_done(due[0].id)
    assert await store.outbox_due(time.time() + 7200) == []
    await store.append("t1", [StoredEvent(2, _status(TaskState.working))], outbox=[_delivery(2)])
    await store.delete("t1")
    assert await store.outbox_due(time.time()) == []


async def test_append_many_is_one_transaction(store: Store) -> None:
    """A group commit of many tasks' appends stores all of them or none."""
    await store.append("t2", [StoredEvent(1, _task("t2"))])
    batch = [
        Append("t1", [StoredEvent(1, _task())], [_delivery(1)]),
        Append("t2", [StoredEvent(1, _task("t2"))]),  # already logged: all refused
    ]
    with pytest.raises(ValueError, match="already has"):
        await store.append_many(batch)
    assert await store.events("t1") == []
    assert await store.outbox_due(time.time()) == []
    await store.append_many(
        [
            Append("t1", [StoredEvent(1, _task())], [_delivery(1)]),
            Append("t2", [StoredEvent(2, _status(TaskState.working, "t2"))]),
        ]
    )
    assert await store.last_sequence("t1") == 1
    assert await store.last_sequence("t2") == 2
    assert len(await store.outbox_due(time.time())) == 1


async def test_leases_fence_appends(store: Store) -> None:
    """One holder at a time; a holder whose lease was taken over cannot write."""
    first = await store.acquire_lease("t1", "p1", 60)
    assert first is not None
    assert await store.acquire_lease("t1", "p2", 60) is None
    again = await store.acquire_lease("t1", "p1", 60)  # the holder renews its own
    assert again is not None
    assert again.token == first.token
    await store.append("t1", [StoredEvent(1, _task())], lease=first)
    assert await store.renew_leases("p1", 60) == {"t1"}
    assert await store.renew_leases("p2", 60) == set()
    await store.release_lease(first)
    second = await store.acquire_lease("t1", "p2", 60)
    assert second is not None
    assert second.token > first.token
    with pytest.raises(LeaseLostError):
        await store.append("t1", [StoredEvent(2, _status(TaskState.working))], lease=first)
    assert await store.last_sequence("t1") == 1
    await store.append("t1", [StoredEvent(2, _status(TaskState.working))], lease=second)
    current = await store.get_lease("t1")
    assert current is not None
    assert (current.holder, current.token) == ("p2", second.token)


async def test_an_expired_lease_is_taken_over(store: Store) -> None:
    gone = await store.acquire_lease("t1", "p1", -1)  # expired at once: a crashed holder
    assert gone is not None
    assert await store.renew_leases("p1", 60) == set()
    taken = await store.acquire_lease("t1", "p2", 60)
    assert taken is not None
    assert taken.token > gone.token
    with pytest.raises(LeaseLostError):
        await store.append("t1", [StoredEvent(1, _task())], lease=gone)
    await store.release_lease(gone)  # a stale release changes nothing
    assert await store.acquire_lease("t1", "p3", 60) is None
