"""The push outbox's claim (``OutboxStore.outbox_claim``) on every store: lane order,
leases, and one claimer per entry under concurrent claims (several processes)."""

from __future__ import annotations

import asyncio
import time

from parley.stores import OutboxEntry, Store, StoredEvent
from parley.types import Task, TaskState, TaskStatus, TaskStatusUpdateEvent


def _entry(sequence: int, task_id: str = "t1", config_id: str = "hook") -> OutboxEntry:
    return OutboxEntry(task_id, config_id, sequence, f'{{"n":{sequence}}}')


async def _write(store: Store, task_id: str, sequences: range, configs: tuple[str, ...]) -> None:
    for sequence in sequences:
        event = (
            Task(id=task_id, context_id="c", status=TaskStatus(state=TaskState.submitted))
            if sequence == 1
            else TaskStatusUpdateEvent(
                task_id=task_id,
                context_id="c",
                status=TaskStatus(state=TaskState.working),
                final=False,
            )
        )
        outbox = [_entry(sequence, task_id, config) for config in configs]
        await store.append(task_id, [StoredEvent(sequence, event)], outbox=outbox)


async def test_only_the_head_of_each_lane_is_claimed(store: Store) -> None:
    before = time.time()
    await _write(store, "t1", range(1, 4), ("a", "b"))
    await _write(store, "t2", range(1, 3), ("a",))
    now = time.time()
    claimed = await store.outbox_claim("p1", now, 30.0, 10)
    assert [(e.task_id, e.config_id, e.sequence) for e in claimed] == [
        ("t1", "a", 1),
        ("t1", "b", 1),
        ("t2", "a", 1),
    ]
    assert all(before <= e.created <= time.time() for e in claimed)
    # while claimed, neither the heads nor what follows them is handed out again
    assert await store.outbox_claim("p2", now, 30.0, 10) == []
    await store.outbox_done(claimed[0].id)
    [next_a] = await store.outbox_claim("p2", now, 30.0, 10)
    assert (next_a.task_id, next_a.config_id, next_a.sequence) == ("t1", "a", 2)


async def test_a_claim_expires_and_a_retry_releases_it(store: Store) -> None:
    await _write(store, "t1", range(1, 3), ("a",))
    now = time.time()
    [first] = await store.outbox_claim("p1", now, 5.0, 10)
    assert await store.outbox_claim("p2", now + 4.0, 5.0, 10) == []
    [again] = await store.outbox_claim("p2", now + 6.0, 5.0, 10)  # p1 died: lease over
    assert (again.id, again.sequence) == (first.id, 1)
    await store.outbox_retry(again.id, now + 100.0)
    assert await store.outbox_claim("p3", now + 7.0, 5.0, 10) == []  # not due; lane waits
    [retried] = await store.outbox_claim("p3", now + 101.0, 5.0, 10)
    assert (retried.id, retried.attempts, retried.created) == (first.id, 1, first.created)


async def test_limit_bounds_a_claim(store: Store) -> None:
    for task in range(5):
        await _write(store, f"t{task}", range(1, 2), ("a",))
    claimed = await store.outbox_claim("p1", time.time(), 30.0, 2)
    assert [e.task_id for e in claimed] == ["t0", "t1"]


async def test_concurrent_claimers_never_share_an_entry(store: Store) -> None:
    """Eight claimers race, many rounds: every entry is claimed exactly once."""
    await _write(store, "t1", range(1, 2), tuple(f"c{n}" for n in range(40)))
    now = time.time()
    for _ in range(3):
        results = await asyncio.gather(
            *(store.outbox_claim(f"p{n}", now, 60.0, 7) for n in range(8))
        )
        ids = [entry.id for claimed in results for entry in claimed]
        assert len(ids) == len(set(ids))
        for entry_id in ids:
            await store.outbox_done(entry_id)
    assert await store.outbox_claim("late", now, 60.0, 100) == []
    assert await store.outbox_due(now) == []
