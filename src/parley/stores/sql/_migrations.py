"""Schema migrations: alembic, run on a connection of the store's own engine."""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncEngine

SCRIPT_LOCATION = "parley.stores.sql:migrations"
_LOCK_KEY = 0x7061726C6579  # "parley": serialises concurrent upgrades on PostgreSQL


class SchemaError(RuntimeError):
    """The database schema is not the one this parley needs (and may not be upgraded)."""


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest migration this parley ships."""
    revision = ScriptDirectory.from_config(_config()).get_current_head()
    assert revision is not None
    return revision


def _upgrade(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    command.upgrade(_config(connection), "head")


def _revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema migration parley ships."""

    revision: str
    title: str
    """The first line of its docstring: what it changes."""


def _pending(connection: Connection) -> tuple[str | None, list[Migration]]:
    current = _revision(connection)
    scripts = ScriptDirectory.from_config(_config())
    ahead = reversed(list(scripts.iterate_revisions(head(), current)))
    return current, [
        Migration(script.revision, (script.doc or "").strip().splitlines()[0]) for script in ahead
    ]


async def pending(engine: AsyncEngine) -> tuple[str | None, list[Migration]]:
    """The database's schema revision (``None`` before the first migration) and the
    migrations ``upgrade`` would apply to it, oldest first."""
    async with engine.connect() as connection:
        return await connection.run_sync(_pending)


_upgrading: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)
"""The upgrades of an event loop take turns: alembic keeps the context of the migration
it runs in a module global, and two stores opening one new SQLite file together would
both find it empty."""


async def upgrade(engine: AsyncEngine) -> str:
    """Bring the database to the newest schema; returns its revision. Idempotent.
    Upgrades take turns: in this event loop (``_upgrading``), and on PostgreSQL across
    processes (an advisory lock)."""
    lock = _upgrading.setdefault(asyncio.get_running_loop(), asyncio.Lock())
    async with lock, engine.begin() as connection:
        await connection.run_sync(_upgrade)
    return head()


async def check(engine: AsyncEngine) -> None:
    """Raise ``SchemaError`` unless the database is at the newest schema."""
    async with engine.connect() as connection:
        current = await connection.run_sync(_revision)
    wanted = head()
    if current != wanted:
        raise SchemaError(
            f"the database schema is at revision {current or 'none'}, this parley needs "
            f"{wanted}: run `parley db upgrade --db URL`"
        )
