"""The ``store`` fixture: every Store implementation, each on a real backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.stores import MemoryStore, Store
from parley.stores.sql import SQLStore
from tests.stores.databases import postgres_engine, sqlite_url


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "sqlite":
        sql = SQLStore(sqlite_url(tmp_path))
        yield sql
        await sql.aclose()
    else:
        async with postgres_engine() as engine:
            sql = SQLStore(engine)
            try:
                yield sql
            finally:  # its group writer's drain holds a connection the dispose does not close
                await sql.aclose()
