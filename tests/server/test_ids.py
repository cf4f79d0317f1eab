"""Ids and timestamps the server makes: version 4 and 7 UUIDs, ISO 8601 UTC times; each
test runs with ``parley._speedups`` and on the plain path."""

from __future__ import annotations

import itertools
import os
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from parley._speedups import enabled, made_time
from parley.server import new_id
from parley.server.agent._ids import new_ordered_id, now, timestamp
from parley.stores._protocols import status_time
from parley.types import TaskState, TaskStatus
from tests.speedups import plain


@pytest.fixture(autouse=True, params=["speedups", "plain"])
def way(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "plain":
        with plain():
            yield request.param
    else:
        yield request.param


def test_new_ids_are_distinct_version_4_uuids() -> None:
    ids = [new_id() for _ in range(5000)]  # several pools' worth
    assert len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122


def test_a_forked_child_makes_ids_of_its_own() -> None:
    new_id()  # the parent's pool is filled before the fork
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: send five ids and leave at once
        os.write(write, " ".join(new_id() for _ in range(5)).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = set(os.read(read, 4096).decode().split())
    os.close(read)
    parent = {new_id() for _ in range(5)}
    assert len(child) == 5
    assert not child & parent


def test_now_is_the_current_utc_time_in_iso_8601() -> None:
    stamps = [now() for _ in range(3)]
    for stamp in stamps:
        moment = datetime.fromisoformat(stamp)
        assert moment.utcoffset() == timedelta(0)
        assert abs(datetime.now(UTC) - moment) < timedelta(seconds=2)
        assert stamp.endswith("+00:00")
    assert stamps == sorted(stamps)


def test_a_timestamp_is_its_moment_in_iso_8601_to_the_microsecond() -> None:
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    start = time.time_ns() // 1000
    moments = [start, start - start % 1_000_000, start + 7, start + 1_000_001, 1_000_000_123]
    moments += [start - start % 1_000_000 + micro for micro in (9, 90, 909, 9_090, 90_909)]
    for moment in moments:
        expected = (epoch + timedelta(microseconds=moment)).isoformat(timespec="microseconds")
        assert timestamp(moment) == expected


def test_the_status_time_of_a_timestamp_made_here_is_its_parse(way: str) -> None:
    """The fast clock keeps the epoch seconds of what it made (``made_time``), so a store
    filing the status need not parse it: the same float the parse gives, for each."""
    start = time.time_ns() // 1000
    stamps = [now() for _ in range(300)]  # more than are kept: the oldest go
    stamps += [timestamp(moment) for moment in (start, start + 999_999, 1_000_000_123, 7)]
    for stamp in stamps:
        parsed = datetime.fromisoformat(stamp).timestamp()
        assert made_time(stamp) in (None, parsed)
        assert status_time(TaskStatus(state=TaskState.working, timestamp=stamp)) == parsed
    if way == "plain" or not enabled():
        assert made_time(stamps[-1]) is None
    else:
        assert made_time(stamps[-1]) == datetime.fromisoformat(stamps[-1]).timestamp()


def test_ordered_ids_are_distinct_version_7_uuids_in_the_order_made() -> None:
    ids = []
    for _ in range(5):
        ids += [new_ordered_id() for _ in range(1000)]
        time.sleep(0.002)  # the next thousand in a later millisecond
    assert len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 7
        assert parsed.variant == uuid.RFC_4122
        assert abs((parsed.int >> 80) - time.time() * 1000) < 60_000  # its time, in ms
    thousands = [ids[n : n + 1000] for n in range(0, len(ids), 1000)]
    for earlier, later in itertools.pairwise(thousands):
        assert max(earlier) < min(later)
