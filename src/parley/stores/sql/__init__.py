"""SQL stores: SQLite (embedded) and PostgreSQL, on SQLAlchemy 2 async.

Sits on ``parley.stores``. Needs the ``sql`` extra (SQLAlchemy, aiosqlite, alembic), and
``postgresql`` for asyncpg; ``_extras`` is the one place that checks, so a missing extra
fails with the command that installs it. Schema migrations ship in ``migrations/`` and
run with ``upgrade()``: what ``SQLStore`` does on first use (unless told not to),
and what ``parley db upgrade`` does.
"""

from __future__ import annotations

from parley.stores.sql._extras import require

require("sqlalchemy", "alembic", extra="sql")

from parley.stores.sql._base import database_url  # noqa: E402
from parley.stores.sql._migrations import SchemaError, upgrade  # noqa: E402
from parley.stores.sql._notify import PostgresBus  # noqa: E402
from parley.stores.sql._store import SQLStore  # noqa: E402

__all__ = [
    "PostgresBus",
    "SQLStore",
    "SchemaError",
    "database_url",
    "upgrade",
]
