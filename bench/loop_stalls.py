"""What blocks the event loop while a server on SQLite takes sends: measured in process,
in CPU time of the loop's thread, which machine load moves little.

Drives the app as ``profile_send.py`` does (same options) on asyncio's own loop (whose
callbacks can be timed one by one) and reports:

- ``callbacks``: every callback the loop ran, by CPU time of the loop's thread
  (``time.thread_time``): count, total, p50 / p99 / max, and the slowest by what ran;
  a callback's length is how long every request in flight waited for it;
- ``writer``: the SQLite group writer's flushes (commits per request, writes per
  commit, flushes that found the write lock taken, loop-thread CPU and wall time per
  flush, the WAL file's peak size), the
  writes of each kind per request, and for each write how many flushes it waited;
- ``checkpoints``: the checkpointer thread's checkpoints (count, wall and CPU time);
- ``gc``: the collector's runs on the loop's thread, by generation;
- ``sql``: store calls that go through SQLAlchemy (aiosqlite's thread) per request.

    python bench/loop_stalls.py [--target echo|demo] [--db sqlite] [--requests 3000]
        [--concurrency 64] [--stream [--apart]]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import profile_send  # noqa: E402
from parley.server._gc import MIDDLE_THRESHOLD, YOUNG_THRESHOLD  # noqa: E402


def _voluntary_switches() -> int:
    """How often this thread has given the CPU up (Linux): waiting for the GIL, or for
    I/O; an event loop with work to do does neither otherwise."""
    with open("/proc/thread-self/status") as status:
        for line in status:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    return 0


def _quantiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def at(share: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1e6, 1)

    return {
        "n": len(ordered),
        "total_ms": round(sum(ordered) * 1e3, 1),
        "p50_us": at(0.50),
        "p99_us": at(0.99),
        "max_us": round(ordered[-1] * 1e6, 1),
    }


class _Recorder:
    def __init__(self) -> None:
        self.on = False
        self.callbacks: list[float] = []
        self.slowest: list[tuple[float, str]] = []
        self.flushes: list[float] = []
        self.flush_walls: list[float] = []
        self.wal_peak = 0  # bytes
        self.wal_restarts = 0  # the checkpointer's RESTART checkpoints (SQLiteWriter.restarts)
        self.flush_sizes: list[int] = []
        self.busy = 0
        self.writes: collections.Counter[str] = collections.Counter()
        self.waited: collections.Counter[int] = collections.Counter()
        self.checkpoints: list[tuple[float, float, float]] = []
        self.collections: dict[int, list[float]] = collections.defaultdict(list)
        self.sql: collections.Counter[str] = collections.Counter()
        self.flush_count = 0
        self.switches = 0
        self.latency_cpu: list[float] = []
        self.latency_wall: list[float] = []


def _instrument(recorder: _Recorder) -> None:
    from parley.stores.sql import _store, _writer

    _time_callbacks(recorder)
    _time_flushes(recorder, _writer)
    _time_checkpoints(recorder, _writer)
    _count_sql(recorder, _store)
    _time_collections(recorder)


def _time_callbacks(recorder: _Recorder) -> None:
    run = asyncio.events.Handle._run

    def timed(handle: Any) -> None:
        if not recorder.on:
            return run(handle)
        start = time.thread_time()
        try:
            return run(handle)
        finally:
            spent = time.thread_time() - start
            recorder.callbacks.append(spent)
            if spent > 0.0005:
                recorder.slowest.append((spent, repr(handle)[:160]))

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]


def _time_flushes(recorder: _Recorder, writer: Any) -> None:
    flush = writer.SQLiteWriter.flush
    submit = writer.SQLiteWriter.submit

    def flush_timed(self: Any) -> None:
        pending = len(self._pending)
        cpu, wall = time.thread_time(), time.perf_counter()
        flush(self)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        recorder.flush_count += 1
        if not recorder.on:
            return
        recorder.wal_restarts = getattr(self, "restarts", 0)
        with contextlib.suppress(OSError):
            recorder.wal_peak = max(recorder.wal_peak, os.stat(self.path + "-wal").st_size)
        left = len(self._pending)
        recorder.flushes.append(cpu)
        recorder.flush_walls.append(wall)
        recorder.flush_sizes.append(pending - left)
        recorder.busy += 1 if left else 0

    async def submit_counted(self: Any, write: Any) -> Any:
        if recorder.on:
            recorder.writes[type(write).__name__] += 1
        marker = recorder.flush_count
        result = await submit(self, write)
        if recorder.on:
            recorder.waited[recorder.flush_count - marker] += 1
        return result

    writer.SQLiteWriter.flush = flush_timed
    writer.SQLiteWriter.submit = submit_counted


def _time_checkpoints(recorder: _Recorder, writer: Any) -> None:
    """The checkpointer's connection, wrapped: each checkpoint's wall and CPU time, and
    the CPU the loop's thread (this one) had meanwhile."""
    import sqlite3

    loop_clock = time.pthread_getcpuclockid(threading.get_ident())
    connect = sqlite3.connect

    class Timed:
        def __init__(self, connection: Any) -> None:
            self.connection = connection

        def execute(self, sql: str, *args: Any) -> Any:
            wall, cpu = time.perf_counter(), time.thread_time()
            loop = time.clock_gettime(loop_clock)
            try:
                return self.connection.execute(sql, *args)
            finally:
                if recorder.on and "checkpoint" in sql:
                    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
                    loop = time.clock_gettime(loop_clock) - loop
                    recorder.checkpoints.append((wall, cpu, loop))

        def close(self) -> None:
            self.connection.close()

    def connecting(*args: Any, **kwargs: Any) -> Any:
        connection = connect(*args, **kwargs)
        if threading.current_thread().name != "parley-sqlite-checkpoint":
            return connection
        return Timed(connection)

    writer.sqlite3.connect = connecting


def _count_sql(recorder: _Recorder, store: Any) -> None:
    names = ("get", "events", "last_sequence", "find_message", "claim_message")
    for name in (*names, "save_reply", "context_owner", "append_many"):
        original = getattr(store.SQLStore, name)

        def counted(original: Any = original, name: str = name) -> Any:
            async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
                if recorder.on:
                    recorder.sql[name] += 1
                return await original(self, *args, **kwargs)

            return call

        setattr(store.SQLStore, name, counted())


def _time_collections(recorder: _Recorder) -> None:
    started: dict[str, float] = {}

    def collecting(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started["at"] = time.thread_time()
        elif recorder.on:
            recorder.collections[info["generation"]].append(time.thread_time() - started["at"])

    gc.callbacks.append(collecting)


async def _run(options: argparse.Namespace, recorder: _Recorder) -> None:
    app, store = profile_send._app(options.target, options.db)
    lifespan = app.handler
    await lifespan.start()
    try:
        for number in range(200):
            await profile_send._request(app, profile_send._body(number, options), options.dialect)
        gc.collect()
        gc.freeze()
        gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, 10)  # as the server's tune_gc
        numbers = iter(range(1_000, 1_000 + options.requests))

        async def worker() -> None:
            for number in numbers:
                body = profile_send._body(number, options)
                cpu, wall = time.thread_time(), time.perf_counter()
                await profile_send._request(app, body, options.dialect)
                recorder.latency_cpu.append(time.thread_time() - cpu)
                recorder.latency_wall.append(time.perf_counter() - wall)

        switches = _voluntary_switches()
        recorder.on = True
        await asyncio.gather(*(worker() for _ in range(options.concurrency)))
        recorder.on = False
        recorder.switches = _voluntary_switches() - switches
    finally:
        await lifespan.aclose()
        close = getattr(store, "aclose", None)
        if close is not None:
            await close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=("echo", "demo"), default="echo")
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--requests", type=int, default=3_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--apart", action="store_true", help="with --stream: a write per chunk")
    parser.add_argument("--dialect", choices=("0.3", "1.0"), default="0.3")
    parser.add_argument("--slowest", type=int, default=8)
    options = parser.parse_args()
    recorder = _Recorder()
    _instrument(recorder)
    with contextlib.ExitStack() as stack:
        if options.db == "sqlite":
            folder = stack.enter_context(tempfile.TemporaryDirectory())
            options.db = f"sqlite:///{os.path.join(folder, 'bench.db')}"
        asyncio.run(_run(options, recorder))
    requests = options.requests
    report = {
        "target": options.target,
        "concurrency": options.concurrency,
        "latency_loop_cpu": _quantiles(recorder.latency_cpu),
        "latency_wall": _quantiles(recorder.latency_wall),
        "callbacks": _quantiles(recorder.callbacks),
        "loop_gave_up_cpu": recorder.switches,
        "slowest": [
            [round(spent * 1e6), what]
            for spent, what in sorted(recorder.slowest, reverse=True)[: options.slowest]
        ],
        "writer": {
            "flushes_per_request": round(len(recorder.flushes) / requests, 2),
            "writes_per_flush": round(sum(recorder.flush_sizes) / max(1, len(recorder.flushes)), 2),
            "busy_flushes": recorder.busy,
            "flush_cpu": _quantiles(recorder.flushes),
            "flush_wall": _quantiles(recorder.flush_walls),
            "wal_restarts": recorder.wal_restarts,
            "wal_peak_mb": round(recorder.wal_peak / 1e6, 1),
            "writes_per_request": {k: round(v / requests, 2) for k, v in recorder.writes.items()},
            "flushes_waited": dict(sorted(recorder.waited.items())),
        },
        "checkpoints": {
            "wall": _quantiles([wall for wall, _, _ in recorder.checkpoints]),
            "cpu": _quantiles([cpu for _, cpu, _ in recorder.checkpoints]),
            "loop_share": round(
                sum(loop for _, _, loop in recorder.checkpoints)
                / max(1e-9, sum(cpu + loop for _, cpu, loop in recorder.checkpoints)),
                3,
            ),
        },
        "gc": {str(g): _quantiles(spent) for g, spent in sorted(recorder.collections.items())},
        "sql_per_request": {k: round(v / requests, 2) for k, v in recorder.sql.items()},
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
