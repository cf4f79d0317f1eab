"""Stores: where tasks, their event logs and everything attached to them live.

Sits on ``parley.types`` and ``parley.protocol``; the server uses a store through the
small protocols of ``_protocols`` (one per concern: ``TaskStore``, ``EventStore``,
``SentMessageStore``, ``PushConfigStore``, ``OutboxStore``, ``LeaseStore``; ``Store`` is
all of them). ``MemoryStore`` is the library default; SQL stores (SQLite, PostgreSQL)
live in ``parley.stores.sql``.
"""

from parley.stores._memory import MemoryStore
from parley.stores._open import open_store
from parley.stores._protocols import (
    Append,
    EventStore,
    Lease,
    LeaseLostError,
    LeaseStore,
    OutboxEntry,
    OutboxStore,
    PushConfigStore,
    SentMessage,
    SentMessageStore,
    Store,
    StoredEvent,
    StoreInUseError,
    TaskSnapshot,
    TaskStore,
)

__all__ = [
    "Append",
    "EventStore",
    "Lease",
    "LeaseLostError",
    "LeaseStore",
    "MemoryStore",
    "OutboxEntry",
    "OutboxStore",
    "PushConfigStore",
    "SentMessage",
    "SentMessageStore",
    "Store",
    "StoreInUseError",
    "StoredEvent",
    "TaskSnapshot",
    "TaskStore",
    "open_store",
]
