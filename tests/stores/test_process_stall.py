"""A stream followed through a process that does not run the task, while the process
that runs it stalls (two ``parley serve`` processes on one PostgreSQL database).

The follower's process probes the task every lease time (its recovery sweep), taking
the task's run slot for as long as the lease store takes to say that another process
holds the lease. Here the owner is stopped (SIGSTOP) and the lease row is locked, so the
probe waits; a resubscribe arrives meanwhile and replays what it missed while the
events table is locked; the probe ends before the replay does. The stream must still
end only at a final state it read: the task's completion, once the owner goes on.
Bounded: one task, every wait with a deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlalchemy.pool import NullPool

from parley.stores.sql import database_url
from tests.stores.test_processes import _call, _database, _message, _rpc, _serve

AGENT = "tests.stores.waiting_agent:agent"
DEADLINE = 20.0


@asynccontextmanager
async def _session(database: str) -> AsyncIterator[tuple[AsyncConnection, int]]:
    """A connection of the test's own, in a transaction, and its backend's pid."""
    engine = create_async_engine(database_url(database), poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            pid = (await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one()
            yield connection, int(pid)
    finally:
        await engine.dispose()


async def _until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def _blocked_by(watch: AsyncConnection, pid: int, statement: str) -> bool:
    """Whether a backend running ``statement`` (a ``LIKE`` pattern) waits on ``pid``."""
    query = text(
        "SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid)) "
        "AND query ILIKE :statement"
    )
    found = await watch.execute(query, {"pid": pid, "statement": statement})
    await watch.commit()  # a fresh snapshot for the next look
    return bool(found.scalar_one())


async def _follow(base: str, task_id: str, after: int) -> list[dict[str, Any]]:
    """Every event of a ``tasks/resubscribe`` resumed after event ``after``."""
    events = []
    body = _rpc("tasks/resubscribe", {"id": task_id})
    headers = {"Last-Event-ID": str(after)}
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(DEADLINE)) as client,
        aconnect_sse(client, "POST", f"{base}/", json=body, headers=headers) as source,
    ):
        async for sse in source.aiter_sse():
            events.append(json.loads(sse.data)["result"])
    return events


async def _probing(watch: AsyncConnection) -> bool:
    """Whether a backend is still taking a lease (the probe's statement)."""
    query = text(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
        "AND query ILIKE '%insert%parley_leases%' AND pid <> pg_backend_pid()"
    )
    found = await watch.execute(query)
    await watch.commit()
    return bool(found.scalar_one())


async def _stalled_follow(
    database: str, owner: Any, owner_base: str, follower_base: str, release: Path
) -> list[dict[str, Any]]:
    """Start a task on ``owner``; resubscribe to it through the follower while the owner
    and the lease store stall (see the module docs); release the task; the events the
    resubscribe got."""
    params = {"message": _message(str(release)), "configuration": {"blocking": False}}
    task_id = _call(owner_base, "message/send", params)["id"]

    async def has_artifact() -> bool:
        task = await asyncio.to_thread(_call, owner_base, "tasks/get", {"id": task_id})
        return bool(task.get("artifacts"))

    await _until(has_artifact, "the task's first artifact")
    async with (
        _session(database) as (watch, _),
        _session(database) as (lease_lock, lease_pid),
        _session(database) as (events_lock, events_pid),
    ):
        os.kill(owner.pid, signal.SIGSTOP)  # the owner stalls: no renewal, no event
        try:
            await lease_lock.execute(
                text("SELECT * FROM parley_leases WHERE task_id = :id FOR UPDATE"),
                {"id": task_id},
            )
            # the follower's recovery sweep probes the task and waits for the lease row
            await _until(
                lambda: _blocked_by(watch, lease_pid, "%insert%parley_leases%"),
                "the recovery sweep's probe",
            )
            await events_lock.execute(text("LOCK TABLE parley_events IN ACCESS EXCLUSIVE MODE"))
            following = asyncio.create_task(_follow(follower_base, task_id, 1))
            await _until(
                lambda: _blocked_by(watch, events_pid, "%parley_events%"),
                "the resubscribe's read of the events",
            )
            await lease_lock.rollback()  # the probe learns that the owner holds the lease

            async def probe_over() -> bool:
                return not await _probing(watch)

            await _until(probe_over, "the end of the probe")
            await asyncio.sleep(0.3)  # the probe gives the run slot back
            await events_lock.rollback()  # the replay goes on
        finally:
            os.kill(owner.pid, signal.SIGCONT)
    await asyncio.to_thread(release.touch)
    return await asyncio.wait_for(following, DEADLINE)


@pytest.mark.postgres
def test_a_follower_ends_only_at_a_final_state_it_read(tmp_path: Path) -> None:
    """Spec 7.9 (3.1.6): the stream closes at the task's final status, never before."""
    with _database() as database, ExitStack() as stack:
        owner, owner_base = stack.enter_context(
            _serve(database, tmp_path / "owner.log", AGENT, "--lease-ttl", "10")
        )
        _, follower_base = stack.enter_context(
            _serve(database, tmp_path / "follower.log", AGENT, "--lease-ttl", "1")
        )
        release = tmp_path / "release"
        stalled = _stalled_follow(database, owner, owner_base, follower_base, release)
        events = asyncio.run(stalled)
    assert events, "the resubscribe replayed nothing"
    last = events[-1]
    assert last["kind"] == "status-update", events
    assert (last["status"]["state"], last["final"]) == ("completed", True)
