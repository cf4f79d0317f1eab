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
- ``sql``: store calls that go through SQLAlchemy (aiosqlite's thread) per request;
- ``slices``: the p99 of each 2 s slice of sends (median and worst), as ``million.py``;
- ``slowest_overlapped``: for each kind of stall (a retention delete's flush, a flush
  over 2 ms, a checkpoint, a WAL restart, a collection, a callback over 10 ms of wall
  time), the share of the slowest 1 % of sends that overlapped one, and of all sends.

With ``--expired N`` the store first gets N expired tasks (filled and aged as
``million.py`` does), so retention's start-up sweep deletes them while the sends run:
the sends go on until the sweep ends and ``--requests`` more after it, and the report
is split into ``during_sweep`` and ``after_sweep``, with each retention batch's cost
(``expire``: its wall time, and the loop's CPU in the flush that held its delete).
``--timeline FILE`` writes every send's and stall's times (JSON, a line per phase).

    python bench/loop_stalls.py [--target echo|demo] [--db sqlite] [--requests 3000]
        [--concurrency 64] [--stream [--apart]] [--expired 200000] [--timeline FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import collections
import contextlib
import gc
import itertools
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
from parley.server._gc import tune_gc  # noqa: E402


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
        self.wal_restarts = 0  # times the checkpointer started the WAL over (SQLiteWriter.restarts)
        self.wal_forced = 0  # of them, by a RESTART checkpoint (SQLiteWriter.forced_restarts)
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
        self.expires: list[tuple[float, int]] = []  # each retention batch: wall, removed
        self.delete_flushes: list[float] = []  # loop CPU of the flushes with a delete
        self.spans: list[tuple[float, float, str]] = []  # what may stall sends: from, to, what
        self.sends: list[tuple[float, float]] = []  # each send: from, to
        self.during: _Recorder | None = None  # what was recorded while the sweep ran

    def sweep_ended(self) -> None:
        """Keep what was recorded so far as ``during``, and start over for ``after``."""
        during = _Recorder()
        during.__dict__.update(self.__dict__)
        on = self.on
        self.__init__()  # type: ignore[misc]
        self.on, self.during = on, during


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
        start, wall = time.thread_time(), time.perf_counter()
        try:
            return run(handle)
        finally:
            spent = time.thread_time() - start
            recorder.callbacks.append(spent)
            if time.perf_counter() - wall > 0.01:
                what = getattr(handle._callback, "__qualname__", type(handle._callback).__name__)
                recorder.spans.append((wall, time.perf_counter(), f"callback > 10 ms: {what}"))
            if spent > 0.0005:
                recorder.slowest.append((spent, repr(handle)[:160]))

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]


def _time_flushes(recorder: _Recorder, writer: Any) -> None:
    flush = writer.SQLiteWriter.flush
    submit = writer.SQLiteWriter.submit

    def flush_timed(self: Any) -> None:
        pending = len(self._pending)
        deleting = any(_is_retention(job.write) for job in self._pending)
        cpu, wall = time.thread_time(), time.perf_counter()
        flush(self)
        started, ended = wall, time.perf_counter()
        cpu, wall = time.thread_time() - cpu, ended - wall
        recorder.flush_count += 1
        if not recorder.on:
            return
        recorder.wal_restarts = getattr(self, "restarts", 0)
        recorder.wal_forced = getattr(self, "forced_restarts", 0)
        with contextlib.suppress(OSError):
            recorder.wal_peak = max(recorder.wal_peak, os.stat(self.path + "-wal").st_size)
        left = len(self._pending)
        recorder.flushes.append(cpu)
        if deleting:
            recorder.delete_flushes.append(cpu)
        recorder.flush_walls.append(wall)
        recorder.flush_sizes.append(pending - left)
        recorder.busy += 1 if left else 0
        if deleting or left or cpu > 0.002:
            kind = "delete flush" if deleting else "busy flush" if left else "flush > 2 ms"
            recorder.spans.append((started, ended, kind))

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


def _is_retention(write: Any) -> bool:
    """Whether a write of the group writer is one of retention's (``_expire``)."""
    return getattr(write, "__module__", None) == "parley.stores.sql._expire"


def _time_sweeps(recorder: _Recorder) -> None:
    """Each retention batch (``expire``) timed; the sweep's end splits the recording."""
    from parley.server.tasks import _retention
    from parley.stores.sql import _expire, _store

    expire, sweep = _store.SQLStore.expire, _retention.RetentionJob.sweep

    async def expire_timed(self: Any, **kwargs: Any) -> int:
        wall = time.perf_counter()
        removed: int = await expire(self, **kwargs)
        if recorder.on:
            recorder.expires.append((time.perf_counter() - wall, removed))
            recorder.spans.append((wall, time.perf_counter(), "expire"))
        return removed

    async def sweep_timed(self: Any) -> int:
        try:
            return await sweep(self)
        finally:
            if recorder.during is None:
                recorder.sweep_ended()

    write = _expire._write

    async def write_timed(*args: Any) -> Any:
        wall = time.perf_counter()
        try:
            return await write(*args)
        finally:
            if recorder.on:
                recorder.spans.append((wall, time.perf_counter(), "delete write queued"))

    _store.SQLStore.expire = expire_timed  # type: ignore[method-assign]
    _expire._write = write_timed
    _retention.RetentionJob.sweep = sweep_timed  # type: ignore[method-assign]


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
                    kind = "restart" if "RESTART" in sql else "checkpoint"
                    recorder.spans.append((wall, time.perf_counter(), kind))
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
            started["at"], started["wall"] = time.thread_time(), time.perf_counter()
        elif recorder.on:
            recorder.collections[info["generation"]].append(time.thread_time() - started["at"])
            what = f"gc {info['generation']}"
            recorder.spans.append((started["wall"], time.perf_counter(), what))

    gc.callbacks.append(collecting)


async def _expired_store(options: argparse.Namespace) -> None:
    """Store one task through the app, then ``options.expired`` copies of it, every one
    aged past retention (``million.py``'s fill and age)."""
    from bench import million

    app, store = profile_send._app(options.target, options.db)
    await app.handler.start()
    try:
        await profile_send._request(app, profile_send._body(0, options), options.dialect)
    finally:
        await app.handler.aclose()
        close = getattr(store, "aclose", None)
        if close is not None:
            await close()
    await million._fill(options.db, options.expired)
    await million._age(options.db)


def _sends(options: argparse.Namespace, recorder: _Recorder) -> Any:
    """The numbers of the sends to make: ``options.requests``, or with ``--expired``
    as many as the sweep takes and ``options.requests`` after it."""
    if not options.expired:
        yield from range(1_000, 1_000 + options.requests)
        return
    number = 1_000
    while recorder.during is None or len(recorder.latency_wall) < options.requests:
        yield number
        number += 1


async def _run(options: argparse.Namespace, recorder: _Recorder) -> None:
    if options.expired:
        await _expired_store(options)
        _time_sweeps(recorder)
    app, store = profile_send._app(options.target, options.db)
    lifespan = app.handler
    await lifespan.start()
    try:
        for number in range(200):
            await profile_send._request(app, profile_send._body(number, options), options.dialect)
        if not tune_gc():  # as the server's lifespan does (collect, freeze, thresholds)
            raise RuntimeError("the collector was tuned before the warm-up")
        numbers = _sends(options, recorder)

        async def worker() -> None:
            for number in numbers:
                body = profile_send._body(number, options)
                cpu, wall = time.thread_time(), time.perf_counter()
                await profile_send._request(app, body, options.dialect)
                recorder.latency_cpu.append(time.thread_time() - cpu)
                recorder.latency_wall.append(time.perf_counter() - wall)
                recorder.sends.append((wall, time.perf_counter()))

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


def _report(recorder: _Recorder, options: argparse.Namespace) -> dict[str, Any]:
    requests = max(1, len(recorder.latency_wall))
    report = {
        "requests": len(recorder.latency_wall),
        "latency_loop_cpu": _quantiles(recorder.latency_cpu),
        "latency_wall": _quantiles(recorder.latency_wall),
        "slices": _slices(recorder.sends),
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
            "wal_restarts_forced": recorder.wal_forced,
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
        "slowest_overlapped": _overlapped(recorder),
    }
    if recorder.expires:
        report["expire"] = {
            "batches": len(recorder.expires),
            "removed": sum(removed for _, removed in recorder.expires),
            "wall": _quantiles([wall for wall, _ in recorder.expires]),
            "delete_flush_cpu": _quantiles(recorder.delete_flushes),
        }
    return report


def _slices(sends: list[tuple[float, float]]) -> dict[str, Any]:
    """The p99 of the sends that ended in each 2 s slice, as ``million.py`` measures
    (``n``: slices; the median and worst slice's p99, in ms)."""
    if not sends:
        return {}
    first = min(end for _, end in sends)
    by_slice: dict[int, list[float]] = collections.defaultdict(list)
    for start, end in sends:
        by_slice[int((end - first) / SLICE_SECONDS)].append(end - start)
    p99s = sorted(
        sorted(spent)[int(0.99 * len(spent))] * 1e3
        for spent in by_slice.values()
        if len(spent) >= 100  # a whole slice (not the last, cut short)
    )
    if not p99s:
        return {}
    return {
        "n": len(p99s),
        "median_p99_ms": round(p99s[len(p99s) // 2], 1),
        "worst_p99_ms": round(p99s[-1], 1),
        "p99s_ms": [round(p99, 1) for p99 in p99s[-5:]],
    }


SLICE_SECONDS = 2


def _overlapped(recorder: _Recorder) -> dict[str, list[float]]:
    """For each kind of span (a delete's flush, a checkpoint, a collection...): the share
    of the slowest 1 % of sends that overlapped one, and the share of all sends that
    did. A kind far more common among the slowest is what makes them slow."""
    sends = recorder.sends
    if not sends:
        return {}
    slow = sorted(sends, key=lambda send: send[1] - send[0])[-max(1, len(sends) // 100) :]
    by_kind: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    for start, end, kind in recorder.spans:
        by_kind[kind].append((start, end))
    shares: dict[str, list[float]] = {}
    for kind, spans in sorted(by_kind.items()):
        spans.sort()
        starts = [start for start, _ in spans]
        reach = list(itertools.accumulate((end for _, end in spans), max))

        def hit(
            send: tuple[float, float], starts: list[float] = starts, reach: list[float] = reach
        ) -> bool:
            index = bisect.bisect_left(starts, send[1])
            return index > 0 and reach[index - 1] > send[0]

        shares[kind] = [
            round(sum(map(hit, slow)) / len(slow), 3),
            round(sum(map(hit, sends)) / len(sends), 3),
        ]
    return shares


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
    parser.add_argument("--expired", type=int, default=0, help="expired tasks to sweep first")
    parser.add_argument("--timeline", help="write each send's and span's times to this file")
    options = parser.parse_args()
    recorder = _Recorder()
    _instrument(recorder)
    with contextlib.ExitStack() as stack:
        if options.db == "sqlite":
            folder = stack.enter_context(tempfile.TemporaryDirectory())
            options.db = f"sqlite:///{os.path.join(folder, 'bench.db')}"
        asyncio.run(_run(options, recorder))
    report: dict[str, Any] = {"target": options.target, "concurrency": options.concurrency}
    if recorder.during is not None:
        report["during_sweep"] = _report(recorder.during, options)
        report["after_sweep"] = _report(recorder, options)
    else:
        report.update(_report(recorder, options))
    print(json.dumps(report, indent=1))
    if options.timeline:
        with open(options.timeline, "w") as out:
            for during in (recorder.during, recorder):
                if during is not None:
                    json.dump({"sends": during.sends, "spans": during.spans}, out)
                    out.write("\n")


if __name__ == "__main__":
    main()
