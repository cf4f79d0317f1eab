"""The switch of ``parley._speedups``: off, every entry declines and the plain path gives
the same bytes; ``PARLEY_SPEEDUPS=0`` turns it off for a whole process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from parley._speedups import enabled, encode_task
from parley.protocol.v1._protojson import event_json
from parley.stores import MemoryStore, StoredEvent
from parley.stores._protocols import TaskQuery
from parley.types import A2AModel
from tests.speedups import plain
from tests.types.shapes import finished


@pytest.mark.skipif(not enabled(), reason="PARLEY_SPEEDUPS=0: the plain path")
def test_off_every_entry_declines_and_the_bytes_stay_the_same() -> None:
    task = finished("hello")
    fast = encode_task(task, "0.3"), event_json(task)
    assert fast[0] == A2AModel.to_json(task)
    assert encode_task(task, "1.0", '{"task":') == fast[1]
    with plain():
        assert encode_task(task, "0.3") is None
        assert encode_task(task, "1.0") is None
        assert event_json(task) == fast[1]
    assert encode_task(task, "0.3") == fast[0]


def test_the_environment_turns_it_off_for_a_process() -> None:
    probe = (
        "import parley.protocol\n"
        "from parley._speedups import enabled, encode_task\n"
        "from parley.types import TaskState\n"
        "print(enabled(), type(vars(TaskState).get('value')).__name__)\n"
    )
    for setting, expected in (("0", "False NoneType"), ("1", "True property")):
        out = subprocess.run(
            [sys.executable, "-c", probe],
            env={**os.environ, "PARLEY_SPEEDUPS": setting},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout.split()
        assert " ".join(out) == expected


async def test_a_memory_store_reads_what_it_kept_either_way() -> None:
    """Tasks finished with the seam on (packed, sorted index) and off (kept as they are)
    read back whole, whichever way the switch is set by then."""
    store = MemoryStore()
    packed = finished("packed", ids=("t1", "c1", "m1", "a1"))
    await store.append("t1", [StoredEvent(1, packed)], snapshot=packed)
    with plain():
        kept = finished("kept", ids=("t2", "c2", "m2", "a2"))
        await store.append("t2", [StoredEvent(1, kept)], snapshot=kept)
        plain_store = MemoryStore()
        await plain_store.append("t2", [StoredEvent(1, kept)], snapshot=kept)
        read_plainly = [await store.get("t1"), await store.get("t2")]
    read_fast = [await store.get("t1"), await plain_store.get("t2")]
    for snapshot in read_plainly + read_fast:
        assert snapshot is not None
    assert [s.task for s in read_plainly] == [packed, kept]  # type: ignore[union-attr]
    assert [s.task for s in read_fast] == [packed, kept]  # type: ignore[union-attr]
    assert [e.event for e in await plain_store.events("t2")] == [kept]
    page = await plain_store.list_tasks(TaskQuery())
    assert [task.id for task in page.tasks] == ["t2"]
