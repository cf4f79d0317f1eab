"""The million-task cost: does a store that holds a million tasks serve as fast as an
empty one, and does retention deleting a million expired tasks stall requests?

For each SQL store (SQLite, PostgreSQL):

1. **fill**: serve parley's echo agent on a fresh database for 2 s, stop it and add
   ``--tasks`` tasks (1,000,000) by cloning the rows of one task the server stored,
   under fresh task and context ids, in large batches. The tables are read from the
   database itself (SQLAlchemy reflection), so the fill keeps up with the store's
   schema: every row that names the task is copied; PostgreSQL is then vacuumed,
   analysed and checkpointed, as an operator's database would be (``_settled_postgres``:
   not the aftermath of the bulk write);
2. **empty** and **full**, in turn (``ROUNDS``: five rounds each, ABBA...): serve the
   echo agent on a fresh database (empty) or the filled one (full), warm up 2 s, measure
   ``message/send`` at 16 and 64 connections; each phase's last round adds five 2 s
   slices at 64 connections. A phase's throughput is its rounds' mean, its p99 that of
   every request of its rounds (wrk's histograms pooled);
3. **expiring**: age every stored task past the retention period (its activity time
   columns moved 30 days back; PostgreSQL settled again), serve again (retention
   sweeps at start-up) and measure ``message/send`` at 64 connections in 2 s slices
   while the sweep runs, against the full store's figures.

Goals: full within 10 % of empty (throughput and p99), and p99 while
deleting within 2x of the full store's. Each phase of slices gets three p99s: the
median slice's, the worst slice's, and the pooled one (every request of the phase's
slices, from wrk's latency histograms, as if one run): the goal reads the pooled p99
of the deletion against the full store's; the worst slice is the stricter view.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import sys
import time
import uuid
from typing import Any

from sqlalchemy import MetaData, Table, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bench.load import pooled_p99_ms, wrk
from bench.targets import TARGETS, fresh_database, serving, wal_state

BATCH = 20_000
ACTIVITY_COLUMNS = ("touched", "created", "updated", "updated_at", "created_at")
AGE = 30 * 86_400
SLICE_SECONDS = 2
MAX_SLICES = 300
BASELINE_SLICES = 5


def new_ordered_id() -> str:
    """A time-ordered (version 7) UUID, as the server makes task and context ids, so the
    filled rows sit in the indexes where the server's own would."""
    bits = (time.time_ns() // 1_000_000) << 80 | secrets.randbits(80)
    bits = bits & ~(0xF << 76) | 0x7 << 76  # version 7
    bits = bits & ~(0x3 << 62) | 0x2 << 62  # RFC 4122 variant
    return str(uuid.UUID(int=bits))


ROUNDS = ("empty", "full", "full", "empty", "empty", "full", "full", "empty", "empty", "full")
"""The empty and the full store served in turn, five times each, in an order (ABBA
ABBA AB) that cancels a steady drift of the machine: one run of each was not enough to
read a 10 % goal (run to run, the empty store's throughput moved by 20 % on a slow
machine). Five, not three: a PostgreSQL run can have a round with a stall, in an
empty round as often as in a full one, and with three rounds a phase's pooled p99
would be that round's. Each empty round has a fresh database, so it stays empty (a round stores
~100,000)."""


def million(options: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {
        "mode": "million",
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "tasks": options.tasks,
        "stores": {},
    }
    for store in options.stores.split(","):
        print(f"-- {store}: {options.tasks:,} tasks", file=sys.stderr, flush=True)
        report["stores"][store] = _one_store(store, options)
    return report


def _one_store(store: str, options: argparse.Namespace) -> dict[str, Any]:
    target = TARGETS[store]
    result: dict[str, Any] = {"name": target.name}
    with _database(store, options.postgres) as url:
        with serving(target, db_url=url) as served:
            wrk(served, 16, 2)  # the task the fill copies
        started = time.monotonic()
        result["stored_before_fill"] = asyncio.run(_fill(url, options.tasks))
        result["fill_seconds"] = round(time.monotonic() - started, 1)
        rounds: dict[str, list[list[dict[str, Any]]]] = {"empty": [], "full": []}
        starts: dict[str, list[float]] = {"empty": [], "full": []}
        for phase in ROUNDS:
            with contextlib.ExitStack() as stack:
                db = (
                    url
                    if phase == "full"
                    else stack.enter_context(_database(store, options.postgres))
                )
                started = time.monotonic()
                served = stack.enter_context(serving(target, db_url=db))
                starts[phase].append(round(time.monotonic() - started, 2))
                wrk(served, 16, 2)
                runs = [_measured(served, c, store, options) for c in (16, 64)]
                rounds[phase].append(runs)
                if len(rounds[phase]) == ROUNDS.count(phase):  # its last round: the slices
                    result[f"{phase}_slices"] = _slices(served, BASELINE_SLICES)
            _say_round(phase, runs)
        for phase in ("empty", "full"):
            result[phase] = _pooled_rounds(rounds[phase])
            result[f"start_{phase}_seconds"] = max(starts[phase])
            _say(phase, result[phase], result[f"{phase}_slices"])
        asyncio.run(_age(url))
        before = wal_state(options.postgres) if store == "postgres" else None
        result["expiring"] = _during_sweep(target, url)
        if before is not None:  # what PostgreSQL's log did while the sweep ran
            result["expiring"].update(wal_state(options.postgres).since(before))
    result["load_average"] = os.getloadavg()
    return result


def _measured(served: Any, connections: int, store: str, options: argparse.Namespace) -> Any:
    """One wrk run of a round, with what PostgreSQL's log did meanwhile (checkpoints,
    bytes a request: ``WalState``) for the PostgreSQL store."""
    before = wal_state(options.postgres) if store == "postgres" else None
    run = wrk(served, connections, options.seconds, histogram=True)
    if before is not None:
        run.update(wal_state(options.postgres).since(before))
        requests = max(run["per_s"] * options.seconds, 1)
        run["wal_bytes_per_request"] = round(run["wal_bytes"] / requests)
    return run


def _pooled_rounds(rounds: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per connection count, the rounds as one: throughput their mean, p99 from every
    request's latency (``pooled_p99_ms``), each round's own figures kept beside."""
    pooled = []
    for runs in zip(*rounds, strict=True):
        p50s = sorted(r["p50_ms"] for r in runs)
        one = {
            "connections": runs[0]["connections"],
            "per_s": round(sum(r["per_s"] for r in runs) / len(runs), 1),
            "p50_ms": p50s[len(p50s) // 2],
            "p99_ms": pooled_p99_ms(list(runs)),
            "rounds": [{k: r[k] for k in ("per_s", "p50_ms", "p99_ms")} for r in runs],
        }
        pooled.append(one)
    return pooled


def _say_round(phase: str, runs: list[dict[str, Any]]) -> None:
    figures = ", ".join(
        f"c={r['connections']} {r['per_s']:.0f}/s p99 {r['p99_ms']:.1f} ms"
        + (
            f" (wal {r['wal_bytes_per_request']:,} B/request, {r['checkpoints']} checkpoints)"
            if "wal_bytes" in r
            else ""
        )
        for r in runs
    )
    print(f"   {phase} round: {figures}", file=sys.stderr, flush=True)


def _say(phase: str, runs: list[dict[str, Any]], slices: dict[str, Any]) -> None:
    """The phase's figures as they come (a long run stopped early still tells them)."""
    figures = ", ".join(
        f"c={r['connections']} {r['per_s']:.0f}/s p99 {r['p99_ms']:.0f} ms" for r in runs
    )
    print(
        f"   {phase}: {figures}; slices {slices['per_s']:.0f}/s p99 median "
        f"{slices['median_p99_ms']:.0f} worst {slices['worst_p99_ms']:.0f} "
        f"pooled {slices['pooled_p99_ms']:.0f} ms",
        file=sys.stderr,
        flush=True,
    )


def _slices(served: Any, count: int) -> dict[str, Any]:
    """``count`` 2 s runs at 64 connections: the figures the sweep's slices compare to."""
    return _summary([_slice(served) for _ in range(count)])


def _slice(served: Any) -> dict[str, Any]:
    """One 2 s run at 64 connections, with its latency histogram."""
    return wrk(served, 64, SLICE_SECONDS, histogram=True)


def _summary(slices: list[dict[str, Any]]) -> dict[str, Any]:
    """The slices' figures; their histograms are pooled, then dropped (the report keeps
    each slice's own p50, p99 and max)."""
    p99s = sorted(s["p99_ms"] for s in slices)
    pooled = pooled_p99_ms(slices)
    for one in slices:
        one.pop("latency_us", None)
    return {
        "slices": slices,
        "worst_p99_ms": p99s[-1],
        "median_p99_ms": p99s[len(p99s) // 2],
        "pooled_p99_ms": pooled,
        "per_s": round(sum(s["per_s"] for s in slices) / len(slices), 1),
    }


def _database(store: str, postgres: str) -> Any:
    if store == "postgres":
        return fresh_database(postgres)
    import tempfile

    @contextlib.contextmanager
    def sqlite_file() -> Any:
        with tempfile.TemporaryDirectory(prefix="parley-million-") as folder:
            yield f"sqlite:///{folder}/parley.db"

    return sqlite_file()


def _engine(url: str) -> AsyncEngine:
    from parley.stores.sql import database_url

    return create_async_engine(database_url(url))


async def _tables(engine: AsyncEngine) -> list[Table]:
    metadata = MetaData()
    async with engine.connect() as connection:
        await connection.run_sync(metadata.reflect)
    return [table for name, table in metadata.tables.items() if name != "alembic_version"]


def _task_column(table: Table) -> Any:
    """The column that names the task a row belongs to (``id`` in the table of tasks)."""
    if "task_id" in table.c:
        return table.c.task_id
    if "id" in table.c and "context_id" in table.c:
        return table.c.id
    return None


async def _fill(url: str, tasks: int) -> int:
    """Add ``tasks`` copies of one stored task; returns how many tasks were there before.

    The rows are read through SQLAlchemy (reflection) and written by the driver in bulk:
    ``executemany`` in transactions of ``BATCH`` tasks on SQLite, ``COPY`` on PostgreSQL."""
    engine = _engine(url)
    try:
        tables = [t for t in await _tables(engine) if _task_column(t) is not None]
        owner = next(t for t in tables if "context_id" in t.c and "id" in t.c)
        async with engine.connect() as connection:
            before = (await connection.execute(select(func.count()).select_from(owner))).scalar()
            row = (await connection.execute(select(owner.c.id, owner.c.context_id))).first()
            assert row is not None, "the server stored no task to copy"
            template_id, context_id = row
            templates = {}
            for table in tables:
                # a generated key (the outbox's ``id`` beside its ``task_id``) is the
                # database's to number
                generated = "id" if "task_id" in table.c else None
                columns = [c.name for c in table.c if c.name != generated]
                query = select(*[table.c[name] for name in columns])
                found = await connection.execute(query.where(_task_column(table) == template_id))
                rows = [tuple(r) for r in found]
                if rows:
                    templates[table.name] = (columns, rows)
    finally:
        await engine.dispose()
    copies = _Copies(templates, template_id, context_id)
    if url.startswith("sqlite"):
        _write_sqlite(url.split("sqlite:///", 1)[1], copies, tasks)
    else:
        await _write_postgres(url, copies, tasks)
    return int(before or 0)


class _Copies:
    """The template task's rows under fresh task and context ids, ``count`` tasks at once."""

    def __init__(
        self, templates: dict[str, tuple[list[str], list[tuple[Any, ...]]]], task: str, context: str
    ) -> None:
        self.templates = templates
        self.task, self.context = task, context

    def rows(self, count: int) -> dict[str, list[tuple[Any, ...]]]:
        out: dict[str, list[tuple[Any, ...]]] = {name: [] for name in self.templates}
        task, context = self.task, self.context
        for _ in range(count):
            new_task, new_context = new_ordered_id(), new_ordered_id()  # as the server does
            for name, (_, rows) in self.templates.items():
                out[name].extend(
                    tuple(
                        v.replace(task, new_task).replace(context, new_context)
                        if isinstance(v, str)
                        else v
                        for v in row
                    )
                    for row in rows
                )
        return out


def _write_sqlite(path: str, copies: _Copies, tasks: int) -> None:
    import sqlite3

    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        for start in range(0, tasks, BATCH):
            count = min(BATCH, tasks - start)
            connection.execute("BEGIN IMMEDIATE")
            for name, rows in copies.rows(count).items():
                columns = copies.templates[name][0]
                marks = ", ".join("?" for _ in columns)
                sql = f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({marks})"
                connection.executemany(sql, rows)
            connection.execute("COMMIT")
            _progress(start, count)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()


async def _write_postgres(url: str, copies: _Copies, tasks: int) -> None:
    import asyncpg

    connection = await asyncpg.connect(url)
    try:
        for start in range(0, tasks, BATCH):
            count = min(BATCH, tasks - start)
            async with connection.transaction():
                for name, rows in copies.rows(count).items():
                    columns = copies.templates[name][0]
                    await connection.copy_records_to_table(name, records=rows, columns=columns)
            _progress(start, count)
        await _settled_postgres(connection)
    finally:
        await connection.close()


async def _settled_postgres(connection: Any) -> None:
    """Leave the database as an operator's would be after the bulk writes, not in their
    aftermath: vacuumed and analysed (autovacuum would have been by then; this machine's
    PostgreSQL runs with it off), and checkpointed, so the writes are on disk.

    After a large ``COPY`` much of the kernel's page cache is still dirty, and ``VACUUM``
    (hint bits and visibility map on every page) dirties more; unflushed, the kernel
    writes that back during the first load after the fill, where each commit's WAL flush
    queues behind it and the first run measures the disk, not the store. ``CHECKPOINT``
    flushes it all before the load."""
    await connection.execute("VACUUM (ANALYZE)")
    await connection.execute("CHECKPOINT")


def _progress(start: int, count: int) -> None:
    if (start + count) % 100_000 < BATCH or count < BATCH:
        print(f"   filled {start + count:,}", file=sys.stderr, flush=True)


async def _age(url: str) -> None:
    """Move every activity time AGE seconds back, so retention finds every task expired."""
    engine = _engine(url)
    try:
        async with engine.begin() as connection:
            for table in await _tables(engine):
                for name in ACTIVITY_COLUMNS:
                    if name in table.c:
                        column = table.c[name]
                        await connection.execute(update(table).values({name: column - AGE}))
    finally:
        await engine.dispose()
    if url.startswith("sqlite"):  # the server must not start on a WAL of every page
        import sqlite3

        connection = sqlite3.connect(url.split("sqlite:///", 1)[1])
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
    else:  # nor on the dead row versions and dirty pages of a million updates
        import asyncpg

        raw = await asyncpg.connect(url)
        try:
            await _settled_postgres(raw)
        finally:
            await raw.close()


async def _remaining(url: str) -> int:
    """How many of the aged tasks are left (not the ones the load keeps adding)."""
    engine = _engine(url)
    try:
        owner = next(t for t in await _tables(engine) if "context_id" in t.c and "id" in t.c)
        activity = next(owner.c[name] for name in ACTIVITY_COLUMNS if name in owner.c)
        aged = select(func.count()).select_from(owner).where(activity < time.time() - AGE / 2)
        async with engine.connect() as connection:
            return int((await connection.execute(aged)).scalar() or 0)
    finally:
        await engine.dispose()


def _during_sweep(target: Any, url: str) -> dict[str, Any]:
    """Load in slices while retention deletes; stops once the aged tasks are gone."""
    slices = []
    with serving(target, db_url=url) as served:
        started = time.monotonic()
        for _ in range(MAX_SLICES):
            slices.append(_slice(served))
            left = asyncio.run(_remaining(url))
            slices[-1]["tasks_left"] = left
            print(
                f"   deleting: {left:,} left, p99 {slices[-1]['p99_ms']:.0f} ms",
                file=sys.stderr,
                flush=True,
            )
            if left == 0:
                break
        swept = time.monotonic() - started
        after = _slices(served, BASELINE_SLICES)
    return {**_summary(slices), "sweep_seconds": round(swept, 1), "after": after}


def _rounds(pooled: dict[str, Any]) -> str:
    return "  ".join(f"{r['per_s']:.0f} ({r['p99_ms']:.1f})" for r in pooled.get("rounds", []))


def million_table(report: dict[str, Any]) -> str:
    lines = [
        f"{report['tasks']:,} tasks stored, message/send (ratio: full / empty; each phase "
        f"{ROUNDS.count('full')} rounds, served in turn: req/s their mean, p99 of all their "
        "requests)"
    ]
    lines.append(
        f"{'store':26} {'phase':10} {'c':>3} {'req/s':>8} {'p99 ms':>8} {'ratio':>6} {'p99 x':>6}"
        "  rounds: req/s (p99 ms)"
    )
    for result in report["stores"].values():
        name = result["name"]
        for empty, full in zip(result["empty"], result["full"], strict=True):
            for phase, s in (("empty", empty), ("full", full)):
                ratio = f"{s['per_s'] / empty['per_s']:.2f}"
                p99 = f"{s['p99_ms'] / empty['p99_ms']:.2f}" if empty["p99_ms"] else ""
                lines.append(
                    f"{name:26} {phase:10} {s['connections']:>3} {s['per_s']:>8.0f} "
                    f"{s['p99_ms']:>8.2f} {ratio:>6} {p99:>6}  {_rounds(s)}"
                )
            pairs = zip(empty.get("rounds", []), full.get("rounds", []), strict=True)
            lines.append(
                f"{'':26} {'full/empty':10} {empty['connections']:>3} round by round: "
                + ", ".join(
                    f"{f['per_s'] / e['per_s']:.2f} (p99 {f['p99_ms'] / e['p99_ms']:.2f}x)"
                    for e, f in pairs
                )
            )
        lines.append(
            f"{name}: 2 s slices at 64 connections, p99 of the median / worst slice and "
            "pooled (ratios to full)"
        )
        full = result["full_slices"]
        sweep = result["expiring"]
        for phase, s in (
            ("empty", result["empty_slices"]),
            ("full", full),
            ("deleting", sweep),
            ("after", sweep["after"]),
        ):
            pooled, full_pooled = s.get("pooled_p99_ms"), full.get("pooled_p99_ms")
            lines.append(
                f"  {phase:9} {len(s['slices']):>3} slices {s['per_s']:>7.0f}/s  p99 "
                f"{s['median_p99_ms']:7.1f} / {s['worst_p99_ms']:7.1f} / "
                f"{pooled or 0:7.1f} ms  "
                f"({s['per_s'] / full['per_s']:.2f}, "
                f"{s['median_p99_ms'] / full['median_p99_ms']:.2f} / "
                f"{s['worst_p99_ms'] / full['worst_p99_ms']:.2f} / "
                + (f"{pooled / full_pooled:.2f})" if pooled and full_pooled else "-)")
            )
        lines.append(
            f"{name}: fill {result['fill_seconds']} s, sweep {sweep['sweep_seconds']} s, "
            f"start-up {result['start_empty_seconds']} s empty / "
            f"{result['start_full_seconds']} s full, load average "
            + " ".join(f"{x:.1f}" for x in result["load_average"])
            + (
                f"; while deleting: {sweep['wal_bytes'] / 2**20:,.0f} MB of WAL, "
                f"{sweep['wal_segments_new']} new segments, {sweep['checkpoints']} checkpoints"
                if "wal_bytes" in sweep
                else ""
            )
        )
    return "\n".join(lines)
