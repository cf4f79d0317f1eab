"""Pick a store from a URL: how ``parley serve --db`` and configs name a store."""

from __future__ import annotations

from parley.stores._memory import MemoryStore
from parley.stores._protocols import Store

MEMORY = "memory"


def open_store(url: str) -> Store:
    """``"memory"`` for a ``MemoryStore``; a SQLite or PostgreSQL SQLAlchemy URL
    (``sqlite:///parley.db``, ``postgresql://user@host/db``, async drivers or not) for a
    ``SQLStore``. Raises ``ValueError`` for other URLs and ``ImportError`` naming
    the extra to install when the SQL support is missing."""
    if url == MEMORY:
        return MemoryStore()
    from parley.stores.sql import SQLStore

    return SQLStore(url)
