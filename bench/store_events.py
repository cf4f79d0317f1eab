"""Cost per appended event as a task grows: 3,000 artifact chunks into one task, the
mean of the first 100 appends against the last 100 (a store that rewrote the whole task
per event would grow with it). Moved here from the test suite: timings are measured,
not asserted in tests. Prints JSON.

    python bench/store_events.py [--chunks 3000] [--postgres postgresql://...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from parley.stores import StoredEvent
from parley.stores.sql import SQLStore
from parley.types import (
    Artifact,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TextPart,
)


async def per_event_ms(store: SQLStore, chunks: int) -> dict[str, float]:
    task = Task(id="big", context_id="c", status=TaskStatus(state=TaskState.working))
    await store.append("big", [StoredEvent(1, task)])
    timings: list[float] = []
    for n in range(chunks):
        event = TaskArtifactUpdateEvent(
            task_id="big",
            context_id="c",
            artifact=Artifact(artifact_id="a", parts=[TextPart(text=f"chunk {n:05d} " * 8)]),
            append=n > 0,
        )
        started = time.perf_counter()
        await store.append("big", [StoredEvent(n + 2, event)])
        timings.append(time.perf_counter() - started)
    await store.aclose()
    first, last = timings[:100], timings[-100:]
    return {"first_100_ms": sum(first) * 10, "last_100_ms": sum(last) * 10}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=3000)
    parser.add_argument("--postgres", help="a PostgreSQL URL to measure too")
    options = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        sqlite = SQLStore(f"sqlite+aiosqlite:///{Path(folder) / 'tasks.db'}")
        results["sqlite"] = await per_event_ms(sqlite, options.chunks)
    if options.postgres:
        results["postgresql"] = await per_event_ms(SQLStore(options.postgres), options.chunks)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
