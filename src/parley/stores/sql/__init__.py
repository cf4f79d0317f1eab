"""SQL stores: SQLite (embedded) and PostgreSQL, on SQLAlchemy 2 async.

Sits on ``parley.stores``. Needs the ``sqlite`` extra (SQLAlchemy, aiosqlite, alembic) or
the ``postgresql`` one (SQLAlchemy, asyncpg, alembic); ``_extras`` is the one place that
checks, so a missing extra fails with the command that installs it. Schema migrations
ship in ``migrations/`` and run with ``upgrade()``: what ``SQLStore`` does on first use
(unless told not to), and what ``parley db upgrade`` does.
"""

from __future__ import annotations

from parley.stores.sql._extras import require

require("sqlalchemy", "alembic", extra="sql")

from parley.stores.sql._base import database_url
from parley.stores.sql._migrations import Migration, SchemaError, pending, upgrade
from parley.stores.sql._notify import PostgresBus
from parley.stores.sql._store import SQLStore

__all__ = [
    "Migration",
    "PostgresBus",
    "SQLStore",
    "SchemaError",
    "database_url",
    "pending",
    "upgrade",
]
