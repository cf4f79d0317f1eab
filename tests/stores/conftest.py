"""The ``store`` fixture: every TaskStore implementation, each on a real backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.stores import MemoryTaskStore, TaskStore
from parley.stores.sql import SQLTaskStore
from tests.stores.databases import postgres_engine, sqlite_url


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    if request.param == "memory":
        yield MemoryTaskStore()
    elif request.param == "sqlite":
        sql = SQLTaskStore(sqlite_url(tmp_path))
        yield sql
        await sql.aclose()
    else:
        async with postgres_engine() as engine:
            yield SQLTaskStore(engine)
