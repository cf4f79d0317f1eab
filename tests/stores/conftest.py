"""The ``store`` fixture: every Store implementation, each on a real backend, each both
with ``parley._speedups`` and on the plain path (``plain``), and SQLite in memory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parley.stores import MemoryStore, Store
from parley.stores.sql import SQLStore
from tests.speedups import plain
from tests.stores.databases import postgres_engine, sqlite_url


@pytest.fixture(
    params=[
        "memory",
        "memory-plain",
        "sqlite",
        "sqlite-plain",
        "sqlite-memory",
        pytest.param("postgresql", marks=pytest.mark.postgres),
        pytest.param("postgresql-plain", marks=pytest.mark.postgres),
    ]
)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param.endswith("-plain"):
        with plain():
            async for store in _store(request.param.removesuffix("-plain"), tmp_path):
                yield store
    else:
        async for store in _store(request.param, tmp_path):
            yield store


async def _store(kind: str, tmp_path: Path) -> AsyncIterator[Store]:
    if kind == "memory":
        yield MemoryStore()
    elif kind == "sqlite":
        sql = SQLStore(sqlite_url(tmp_path))
        yield sql
        await sql.aclose()
    elif kind == "sqlite-memory":  # the database lives in the engine's one connection
        sql = SQLStore("sqlite://")
        yield sql
        await sql.aclose()
    else:
        async with postgres_engine() as engine:
            sql = SQLStore(engine)
            try:
                yield sql
            finally:  # its group writer's drain holds a connection the dispose does not close
                await sql.aclose()
