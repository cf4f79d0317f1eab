"""The memory store's sorted keys, against a plain sorted list: keys added mostly in
order (as status times grow) and out of it, removed anywhere, across chunk splits."""

from __future__ import annotations

import gc
import random

from parley.stores._memory_index import CHUNK, SortedKeys


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
