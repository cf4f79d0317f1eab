"""Task stores: where tasks and their event logs live.

Sits on ``parley.types`` and ``parley.protocol``; the server's request handler uses a
store through the small ``TaskStore`` protocol. ``MemoryTaskStore`` is the library
default; SQL stores (SQLite, PostgreSQL) live in ``parley.stores.sql``.
"""

from parley.stores._memory import MemoryTaskStore
from parley.stores._open import open_task_store
from parley.stores._protocols import SentMessage, StoredEvent, TaskSnapshot, TaskStore

__all__ = [
    "MemoryTaskStore",
    "SentMessage",
    "StoredEvent",
    "TaskSnapshot",
    "TaskStore",
    "open_task_store",
]
