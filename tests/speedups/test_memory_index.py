"""The memory store's sorted keys, against a plain sorted list: keys added mostly in
order (as status times grow) and out of it, removed anywhere, across chunk splits; and
its sorted index, against the plain one, page for page."""

from __future__ import annotations

import gc
import random

from hypothesis import given
from hypothesis import strategies as st

from parley._speedups._memory_index import CHUNK, SortedKeys
from parley._speedups._memory_index import TaskIndex as SortedTaskIndex
from parley.stores._memory_index import Place, TaskIndex
from parley.stores._memory_index import key as _key
from parley.stores._memory_index import position as _position
from parley.stores._protocols import TaskQuery
from parley.types import Task, TaskState, TaskStatus

TIMES = st.floats(min_value=-1e12, max_value=1e12)
"""Status times, epoch seconds: ~30,000 years either side of 1970."""


@given(TIMES, TIMES, st.text(), st.text())
def test_keys_are_ordered_as_their_times_then_ids(
    one: float, other: float, task_id: str, other_id: str
) -> None:
    if one <= other:
        assert _key(one, task_id) <= _key(other, task_id)
    assert (_key(one, task_id) < _key(one, other_id)) is (task_id < other_id)


@given(st.floats(min_value=0, max_value=4e9), st.text())
def test_a_keys_position_gives_the_key_back(touched: float, task_id: str) -> None:
    """A page ends at a key's position (``TaskPage.last``, the next page's token) and the
    next begins after the key made of it: the same key, for any time up to 2096."""
    key = _key(touched, task_id)
    assert _position(key)[1] == task_id
    assert _key(*_position(key)) == key


@given(st.integers(min_value=0, max_value=4 * 10**15))
def test_a_timestamps_position_is_its_time_to_the_microsecond(micros: int) -> None:
    """A status time parsed from a timestamp (six decimals at most) is given back as the
    same float: a page token says what it said when keys held the time as ``020.6f``."""
    touched = float(f"{micros // 10**6}.{micros % 10**6:06d}")
    assert _position(_key(touched, "t")) == (float(f"{touched:020.6f}"), "t")


def test_sorted_keys_hold_what_a_sorted_list_holds() -> None:
    chance = random.Random(14)
    keys, expected = SortedKeys(), list[str]()
    for step in range(6 * CHUNK * 2):
        if expected and chance.random() < 0.3:
            gone = expected.pop(chance.randrange(len(expected)))
            keys.remove(gone)
        else:
            late = step % 7 != 0  # mostly the largest yet
            key = f"{step if late else chance.randrange(step + 1):08d}|{step}"
            keys.add(key)
            expected = sorted([*expected, key])
        assert list(keys.descending(None, "")) == expected[::-1]
        low = expected[len(expected) // 3] if expected else ""
        assert keys.count_above(low) == sum(1 for key in expected if key > low)
    while expected:  # down to nothing, and up again
        keys.remove(expected.pop())
    assert not keys
    keys.add("again")
    assert list(keys.descending(None, "")) == ["again"]


def test_only_the_last_chunk_is_a_list() -> None:
    """Tuples of strings are not tracked by the collector: the keys of a store's tasks
    cost a full collection one short list, whatever their number."""
    keys = SortedKeys()
    for number in range(20 * CHUNK):
        keys.add(f"{number:08d}")
    keys.add("00000100|early")  # into a full chunk, not the last
    gc.collect()
    chunks = keys._chunks
    assert len(chunks) > 5
    assert all(type(chunk) is tuple and not gc.is_tracked(chunk) for chunk in chunks[:-1])
    assert len(chunks[-1]) <= 2 * CHUNK


FILED = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=40),  # task number
        st.integers(min_value=0, max_value=5),  # status time, seconds
        st.sampled_from(list(TaskState)),
        st.sampled_from(["c1", "c2", "c3"]),
        st.sampled_from([None, "alice", "bob", "/t1/alice", "/t2/bob"]),
    ),
    max_size=40,
)
QUERIES = st.builds(
    TaskQuery,
    context_id=st.none() | st.sampled_from(["c1", "c2", "c4"]),
    state=st.none() | st.sampled_from(list(TaskState)),
    touched_after=st.none() | st.integers(min_value=0, max_value=6).map(float),
    after=st.none()
    | st.tuples(st.integers(min_value=0, max_value=5).map(float), st.sampled_from(["t1", "t20"])),
    limit=st.integers(min_value=1, max_value=8),
    owner=st.none() | st.sampled_from(["", "alice", "/t1/alice", "carol"]),
)


@given(FILED, st.sets(st.integers(min_value=0, max_value=40)), QUERIES)
def test_the_sorted_index_pages_as_the_plain_one(
    filed: list[tuple[int, int, TaskState, str, str | None]],
    removed: set[int],
    query: TaskQuery,
) -> None:
    """The same tasks filed, refiled, given owners and removed in both: every query gets
    the same page (tasks, total, cursor) from the sorted index as from the plain one."""
    plain, fast = TaskIndex(), SortedTaskIndex()
    places: dict[str, tuple[Place, str | None]] = {}
    for number, seconds, state, context_id, owner in filed:
        task_id = f"t{number}"
        place = Place(float(seconds), state, context_id)
        if task_id in places:  # refiled, as the store refiles a task whose status moved
            old, had = places[task_id]
            for index in (plain, fast):
                index.remove(task_id, old, had)
            owner = had or owner
        for index in (plain, fast):
            index.add(task_id, place, owner)
        places[task_id] = (place, owner)
    for number in removed:
        task_id = f"t{number}"
        if task_id in places:
            place, owner = places.pop(task_id)
            for index in (plain, fast):
                index.remove(task_id, place, owner)
    tasks = {
        task_id: Task(id=task_id, context_id=place.context_id, status=TaskStatus(state=place.state))
        for task_id, (place, _) in places.items()
    }

    def filed_as(task_id: str) -> tuple[TaskState | None, str | None]:
        place, owner = places[task_id]
        return place.state, owner

    pages = [index.page(query, tasks.get, filed_as) for index in (plain, fast)]
    assert pages[0] == pages[1]
    for context_id in ("c1", "c2", "c3"):
        assert plain.has_context(context_id) is fast.has_context(context_id)
