"""Memory per stored task: one measure for ``memory_parley.py`` and ``memory_sdk.py``.

Sends ``--tasks`` messages, after a warm-up, and reports the memory that stays per task,
measured two ways, each in a process of its own so that neither disturbs the other:

- ``traced``: tracemalloc's traced memory after a full collection, at five points from
  half to all of the tasks, the largest figure (a dict grows by doubling: a single point
  can land just before it grows, and flatter the store);
- ``rss``: the growth of the process's resident memory, at the same points, the largest
  figure (what the system sees: allocator overhead and fragmentation included).

``bytes_per_task`` is the larger of the two. No parley import here: the SDK's script runs
this in its own virtual environment.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

WARM_UP = 200
Send = Callable[[], Awaitable[object]]


def _used(mode: str) -> int:
    if mode == "traced":
        return tracemalloc.get_traced_memory()[0]
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def grow(send: Send, tasks: int, mode: str) -> list[int]:
    """Bytes per task that stay after ``tasks`` sends, at five points (see above)."""
    for _ in range(WARM_UP):
        await send()
    await asyncio.sleep(0.1)
    gc.collect()
    if mode == "traced":
        tracemalloc.start()
    before = _used(mode)
    points, sent = [], 0
    for eighths in (4, 5, 6, 7, 8):
        while sent < tasks * eighths // 8:
            await send()
            sent += 1
        await asyncio.sleep(0.1)  # let finished runs release their live state
        gc.collect()
        points.append(round((_used(mode) - before) / sent))
    tracemalloc.stop()
    return points


def main(sender: Callable[[], Awaitable[tuple[Send, Callable[[], Awaitable[int]]]]]) -> None:
    """Run the measure for ``sender`` (which gives a send function and a count of the
    tasks stored) as the command line asks; print JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--mode", choices=("both", "traced", "rss"), default="both")
    options = parser.parse_args()
    if options.mode != "both":
        print(json.dumps(asyncio.run(_measure(sender, options.tasks, options.mode))))
        return
    results: dict[str, Any] = {"tasks": options.tasks}
    for mode in ("traced", "rss"):
        command = [sys.executable, sys.argv[0], "--tasks", str(options.tasks), "--mode", mode]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        results.update(json.loads(done.stdout))
    results["bytes_per_task"] = max(max(results["traced"]), max(results["rss"]))
    print(json.dumps(results))


async def _measure(
    sender: Callable[[], Awaitable[tuple[Send, Callable[[], Awaitable[int]]]]],
    tasks: int,
    mode: str,
) -> dict[str, Any]:
    send, stored = await sender()
    points = await grow(send, tasks, mode)
    return {mode: points, "stored": await stored()}
