"""Real databases for store tests: a SQLite file, and PostgreSQL in a schema of its own.

PostgreSQL comes from ``PARLEY_TEST_POSTGRES_URL``. Without it (or without a server
there) its tests skip with a one-line reason, unless ``PARLEY_REQUIRE_POSTGRES=1`` (CI),
which turns the skip into a failure.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from parley.stores import MemoryStore, Store
from parley.stores.sql import SQLStore, database_url

STORES = ["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
"""Every kind of store, for ``pytest.mark.parametrize`` with ``served_store``."""


def sqlite_url(directory: Path) -> str:
    return f"sqlite+aiosqlite:///{directory / 'tasks.db'}"


def _unavailable(reason: str) -> None:
    if os.environ.get("PARLEY_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required here (PARLEY_REQUIRE_POSTGRES=1): {reason}")
    pytest.skip(f"no PostgreSQL: {reason}")


@asynccontextmanager
async def postgres_engine() -> AsyncIterator[AsyncEngine]:
    """An engine whose tables live in a fresh schema, dropped afterwards."""
    async with postgres_engines(1) as (engine,):
        yield engine


@asynccontextmanager
async def postgres_engines(count: int) -> AsyncIterator[tuple[AsyncEngine, ...]]:
    """``count`` engines on one fresh schema (as as many processes have), dropped
    afterwards."""
    url = os.environ.get("PARLEY_TEST_POSTGRES_URL")
    if not url:
        _unavailable("set PARLEY_TEST_POSTGRES_URL to run the PostgreSQL tests")
        raise AssertionError  # unreachable: skip and fail raise
    url = database_url(url)
    schema = f"parley_test_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(url)
    try:
        async with admin.begin() as connection:
            await connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    except Exception as error:  # any failure to connect means "no server here"
        await admin.dispose()
        _unavailable(f"cannot reach {url}: {type(error).__name__}")
    settings = {"server_settings": {"search_path": schema}}
    engines = tuple(create_async_engine(url, connect_args=settings) for _ in range(count))
    try:
        yield engines
    finally:
        for engine in engines:
            await engine.dispose()
        async with admin.begin() as connection:
            await connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


@contextmanager
def served_store(kind: str, directory: Path) -> Iterator[Store]:
    """A store of ``kind`` (memory, sqlite, postgresql) for a server running on its own
    thread and event loop: SQL connections are not pooled, so none outlives that loop.

    PostgreSQL's store is not closed here: its writer's drains run on the server's loop,
    and ``asyncio.run`` ends that loop by cancelling them, which gives their connections
    back closed (``_pg_writer._drain_queue``'s ``finally``). Checked with
    ``PYTHONDEVMODE=1 -W error`` on every test that serves PostgreSQL this way: no
    unclosed connection or destroyed task. SQLite's writer keeps its connection on a
    thread of its own, so it is closed from a loop of its own below."""
    if kind == "memory":
        yield MemoryStore()
        return
    if kind == "sqlite":
        engine = create_async_engine(sqlite_url(directory), poolclass=NullPool)
        store = SQLStore(engine)
        try:
            yield store
        finally:  # its group writer's connection: Python 3.13 warns of one left open
            asyncio.run(store.aclose())
        return
    url = os.environ.get("PARLEY_TEST_POSTGRES_URL")
    if not url:
        _unavailable("set PARLEY_TEST_POSTGRES_URL to run the PostgreSQL tests")
    schema = f"parley_test_{uuid.uuid4().hex[:12]}"
    asyncio.run(_ddl(database_url(str(url)), f'CREATE SCHEMA "{schema}"'))
    engine = create_async_engine(
        database_url(str(url)),
        poolclass=NullPool,
        connect_args={"server_settings": {"search_path": schema}},
    )
    try:
        yield SQLStore(engine)
    finally:
        asyncio.run(_ddl(database_url(str(url)), f'DROP SCHEMA "{schema}" CASCADE'))


@contextmanager
def served_postgres_stores(count: int) -> Iterator[tuple[Store, ...]]:
    """``count`` stores on one fresh PostgreSQL schema, as as many processes sharing a
    database have, for servers on threads of their own (see ``served_store``)."""
    url = os.environ.get("PARLEY_TEST_POSTGRES_URL")
    if not url:
        _unavailable("set PARLEY_TEST_POSTGRES_URL to run the PostgreSQL tests")
    url = database_url(str(url))
    schema = f"parley_test_{uuid.uuid4().hex[:12]}"
    asyncio.run(_ddl(url, f'CREATE SCHEMA "{schema}"'))
    settings = {"server_settings": {"search_path": schema}}
    try:
        yield tuple(
            SQLStore(create_async_engine(url, poolclass=NullPool, connect_args=settings))
            for _ in range(count)
        )
    finally:
        asyncio.run(_ddl(url, f'DROP SCHEMA "{schema}" CASCADE'))


async def _ddl(url: str, statement: str) -> None:
    admin = create_async_engine(url, poolclass=NullPool)
    try:
        async with admin.begin() as connection:
            await connection.execute(text(statement))
    except OSError as error:
        _unavailable(f"cannot reach {url}: {type(error).__name__}")
    finally:
        await admin.dispose()
