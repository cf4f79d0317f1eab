"""The million-task cost: does a store that holds a million tasks serve as fast as an
empty one, and does retention deleting a million expired tasks stall requests?

For each SQL store (SQLite, PostgreSQL), on a fresh database:

1. **empty**: serve parley's echo agent, measure ``message/send`` at 16 and 64
   connections;
2. **fill**: stop the server and add ``--tasks`` tasks (1,000,000) by cloning the rows of
   one task the server stored, under fresh task and context ids, in large batches. The
   tables are read from the database itself (SQLAlchemy reflection), so the fill keeps
   up with the store's schema: every row that names the task is copied;
3. **full**: serve again on the filled database and measure the same;
4. **expiring**: age every stored task past the retention period (its activity time
   columns moved 30 days back), serve again (retention sweeps at start-up) and measure
   ``message/send`` at 64 connections in 2 s slices while the sweep runs, against the
   full store's figures.

Goals (issue 14): full within 10 % of empty (throughput and p99), and p99 while
deleting within 2x of the full store's.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from typing import Any

from sqlalchemy import MetaData, Table, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bench.load import wrk
from bench.targets import TARGETS, fresh_database, serving

BATCH = 5_000
ACTIVITY_COLUMNS = ("touched", "created", "updated", "updated_at", "created_at")
AGE = 30 * 86_400
SLICE_SECONDS = 2
MAX_SLICES = 150


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
            wrk(served, 16, 2)
            result["empty"] = [wrk(served, c, options.seconds) for c in (16, 64)]
        started = time.monotonic()
        result["stored_before_fill"] = asyncio.run(_fill(url, options.tasks))
        result["fill_seconds"] = round(time.monotonic() - started, 1)
        with serving(target, db_url=url) as served:
            wrk(served, 16, 2)
            result["full"] = [wrk(served, c, options.seconds) for c in (16, 64)]
        asyncio.run(_age(url))
        result["expiring"] = _during_sweep(target, url)
    return result


def _database(store: str, postgres: str) -> Any:
    if store == "postgres":
        return fresh_database(postgres)
    import contextlib
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
    """Add ``tasks`` copies of one stored task; returns how many tasks were there before."""
    engine = _engine(url)
    try:
        tables = [t for t in await _tables(engine) if _task_column(t) is not None]
        owner = next(t for t in tables if "context_id" in t.c and "id" in t.c)
        async with engine.connect() as connection:
            before = (await connection.execute(select(func.count()).select_from(owner))).scalar()
            row = (await connection.execute(select(owner.c.id, owner.c.context_id))).first()
            assert row is not None, "the server stored no task to copy"
            template_id, context_id = row
            templates = {
                table: [
                    dict(r._mapping)
                    for r in await connection.execute(
                        select(table).where(_task_column(table) == template_id)
                    )
                ]
                for table in tables
            }
        for start in range(0, tasks, BATCH):
            count = min(BATCH, tasks - start)
            async with engine.begin() as connection:
                for table, rows in templates.items():
                    if rows:
                        copies = _copies(rows, template_id, context_id, count)
                        await connection.execute(table.insert(), copies)
            if start % 100_000 == 0:
                print(f"   filled {start + count:,}", file=sys.stderr, flush=True)
        return int(before or 0)
    finally:
        await engine.dispose()


def _copies(
    rows: list[dict[str, Any]], task_id: str, context_id: str, count: int
) -> list[dict[str, Any]]:
    copies = []
    for _ in range(count):
        new_task, new_context = str(uuid.uuid4()), str(uuid.uuid4())
        for row in rows:
            copies.append(
                {
                    key: value.replace(task_id, new_task).replace(context_id, new_context)
                    if isinstance(value, str)
                    else value
                    for key, value in row.items()
                }
            )
    return copies


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
    """Load in slices while retention deletes; stops once the tasks are gone."""
    slices = []
    with serving(target, db_url=url) as served:
        started = time.monotonic()
        for _ in range(MAX_SLICES):
            slices.append(wrk(served, 64, SLICE_SECONDS))
            left = asyncio.run(_remaining(url))
            slices[-1]["tasks_left"] = left
            if left == 0:
                break
    return {
        "sweep_seconds": round(time.monotonic() - started, 1),
        "slices": slices,
        "worst_p99_ms": max(s["p99_ms"] for s in slices),
        "per_s": round(sum(s["per_s"] for s in slices) / len(slices), 1),
    }


def million_table(report: dict[str, Any]) -> str:
    lines = [f"{report['tasks']:,} tasks stored, message/send (ratio: full / empty)"]
    lines.append(
        f"{'store':26} {'phase':10} {'c':>3} {'req/s':>8} {'p99 ms':>8} {'ratio':>6} {'p99 x':>6}"
    )
    for result in report["stores"].values():
        for empty, full in zip(result["empty"], result["full"], strict=True):
            for phase, s in (("empty", empty), ("full", full)):
                ratio = f"{s['per_s'] / empty['per_s']:.2f}"
                p99 = f"{s['p99_ms'] / empty['p99_ms']:.2f}" if empty["p99_ms"] else ""
                lines.append(
                    f"{result['name']:26} {phase:10} {s['connections']:>3} {s['per_s']:>8.0f} "
                    f"{s['p99_ms']:>8.2f} {ratio:>6} {p99:>6}"
                )
        sweep, full64 = result["expiring"], result["full"][-1]
        lines.append(
            f"{result['name']:26} {'deleting':10} {64:>3} {sweep['per_s']:>8.0f} "
            f"{sweep['worst_p99_ms']:>8.2f} {sweep['per_s'] / full64['per_s']:>6.2f} "
            f"{sweep['worst_p99_ms'] / full64['p99_ms']:>6.2f}  (vs full; sweep "
            f"{sweep['sweep_seconds']} s, {len(sweep['slices'])} slices, worst slice p99)"
        )
        lines.append(f"{result['name']:26} fill took {result['fill_seconds']} s")
    return "\n".join(lines)
