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

from parley.stores.sql import SQLStore
from parley.stores.sql._migrations import _config, head, upgrade
from parley.types import PushNotificationConfig
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
