"""Pick a task store from a URL: how ``parley serve --db`` and configs name a store."""

from __future__ import annotations

from parley.stores._memory import MemoryTaskStore
from parley.stores._protocols import TaskStore

MEMORY = "memory"


def open_task_store(url: str) -> TaskStore:
    """``"memory"`` for a ``MemoryTaskStore``; a SQLite or PostgreSQL SQLAlchemy URL
    (``sqlite:///parley.db``, ``postgresql://user@host/db``, async drivers or not) for a
    ``SQLTaskStore``. Raises ``ValueError`` for other URLs and ``ImportError`` naming
    the extra to install when the SQL support is missing."""
    if url == MEMORY:
        return MemoryTaskStore()
    from parley.stores.sql import SQLTaskStore

    return SQLTaskStore(url)
