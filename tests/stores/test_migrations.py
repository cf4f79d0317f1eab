"""The migrations go up and down on SQLite and PostgreSQL, leave the indexes the store's
queries are written for, and what was stored before a migration reads back as it was
meant after it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from parley.stores import StoredEvent
from parley.stores._protocols import TaskQuery
from parley.stores.sql import SQLStore
from parley.stores.sql._migrations import _config, head, upgrade
from parley.types import PushNotificationConfig, Task, TaskState, TaskStatus
from tests.stores.databases import postgres_engine, sqlite_url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "sqlite":
        sqlite = create_async_engine(sqlite_url(tmp_path))
        yield sqlite
        await sqlite.dispose()
    else:
        async with postgres_engine() as postgres:
            yield postgres


def _lease_indexes(connection: Connection) -> dict[str, list[Any]]:
    found = inspect(connection).get_indexes("parley_leases")
    return {str(index["name"]): index["column_names"] for index in found}


def _to(revision: str) -> Any:
    def run(connection: Connection) -> None:
        config = _config(connection)
        if revision == "head":
            command.upgrade(config, revision)
        else:
            command.downgrade(config, revision)

    return run


async def test_the_heartbeat_reads_leases_by_holder_and_expiry(engine: AsyncEngine) -> None:
    assert await upgrade(engine) == head()
    async with engine.begin() as connection:
        assert await connection.run_sync(_lease_indexes) == {
            "ix_parley_leases_holder_expires": ["holder", "expires"]
        }
        await connection.run_sync(_to("0005"))
        assert await connection.run_sync(_lease_indexes) == {"ix_parley_leases_holder": ["holder"]}
        await connection.run_sync(_to("head"))
        assert await connection.run_sync(_lease_indexes) == {
            "ix_parley_leases_holder_expires": ["holder", "expires"]
        }


async def test_push_configs_stored_before_versions_were_kept_are_v0_3(
    engine: AsyncEngine,
) -> None:
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(_config(sync), "0006"))
    config = PushNotificationConfig(url="https://a.example/hook", id="old")
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO parley_push_configs (task_id, config_id, config, created) "
                "VALUES ('t1', 'old', :config, 1.0)"
            ),
            {"config": config.to_json().decode()},
        )
    store = SQLStore(engine)  # upgrades to the newest schema when first used
    try:
        assert await store.push_config_versions("t1") == {"old": "0.3"}
        assert await store.get_push_config("t1", "old") == config
        await store.set_push_config("t1", PushNotificationConfig(url="https://b.example"), "1.0")
        assert await store.push_config_versions("t1") == {"old": "0.3", "t1": "1.0"}
    finally:
        await store.aclose()


def _owner_index(connection: Connection) -> str:
    """How the database describes the owner index (its ``CREATE INDEX``)."""
    if connection.dialect.name == "sqlite":
        query = "SELECT sql FROM sqlite_master WHERE name = 'ix_parley_tasks_owner_touched'"
    else:
        query = (  # this test's schema only: other tests' may exist beside it
            "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() "
            "AND indexname = 'ix_parley_tasks_owner_touched'"
        )
    return str(connection.execute(text(query)).scalar_one())


def _plan_by_owner(connection: Connection) -> str:
    """The plan of ListTasks' page query for one owner (``_list_filters``)."""
    query = (
        "SELECT id FROM parley_tasks WHERE state IS NOT NULL AND owner = 'ann' "
        "ORDER BY touched DESC, id DESC LIMIT 51"
    )
    if connection.dialect.name == "sqlite":
        rows = connection.execute(text(f"EXPLAIN QUERY PLAN {query}")).all()
        return " ".join(str(row[-1]) for row in rows)
    connection.execute(text("SET LOCAL enable_seqscan = off"))  # a handful of rows
    return " ".join(str(row[0]) for row in connection.execute(text(f"EXPLAIN {query}")))


async def test_the_owner_index_holds_owned_tasks_and_serves_queries_by_owner(
    engine: AsyncEngine,
) -> None:
    """0008 makes the owner index partial (``owner IS NOT NULL``): tasks stored before
    read back as they were, by owner too, and a query by owner still uses the index."""
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(_config(sync), "0007"))
        assert "WHERE" not in await connection.run_sync(_owner_index)
    old = Task(id="t-old", context_id="c", status=TaskStatus(state=TaskState.completed))
    async with engine.begin() as connection:
        for task_id, owner, touched in (("t-old", "ann", 2.0), ("t-none", None, 1.0)):
            task = old.model_copy(update={"id": task_id})
            await connection.execute(
                text(
                    "INSERT INTO parley_tasks (id, context_id, state, snapshot, "
                    "snapshot_sequence, touched, owner) "
                    "VALUES (:id, 'c', 'completed', :snapshot, 1, :touched, :owner)"
                ),
                {"id": task_id, "snapshot": task.to_json().decode(), "touched": touched,
                 "owner": owner},
            )  # fmt: skip
    store = SQLStore(engine)  # upgrades to the newest schema when first used
    try:
        assert (await store.list_tasks(TaskQuery(owner="ann"))).tasks == [old]
        assert [t.id for t in (await store.list_tasks(TaskQuery())).tasks] == ["t-old", "t-none"]
        assert [t.id for t in (await store.list_tasks(TaskQuery(owner=""))).tasks] == [
            "t-old",
            "t-none",
        ]
        new = old.model_copy(update={"id": "t-new"})
        await store.append("t-new", [StoredEvent(1, new)], snapshot=new, owner="ann")
        page = await store.list_tasks(TaskQuery(owner="ann"))
        assert sorted(t.id for t in page.tasks) == ["t-new", "t-old"]
        assert await store.context_owner("c") == "ann"
    finally:
        await store.aclose()
    async with engine.begin() as connection:
        assert "owner IS NOT NULL" in await connection.run_sync(_owner_index)
        assert "ix_parley_tasks_owner_touched" in await connection.run_sync(_plan_by_owner)
        await connection.run_sync(_to("0007"))
        assert "WHERE" not in await connection.run_sync(_owner_index)
        await connection.run_sync(_to("head"))
        assert "owner IS NOT NULL" in await connection.run_sync(_owner_index)
