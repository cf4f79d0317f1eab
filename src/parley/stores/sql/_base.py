"""The engine a SQL store runs on: URL, driver, SQLite pragmas, schema on first use."""

from __future__ import annotations

import asyncio
import fcntl
import os
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import AsyncAdaptedQueuePool

from parley.stores._protocols import StoreInUseError
from parley.stores.sql._extras import require
from parley.stores.sql._memory_writer import MemoryWriter
from parley.stores.sql._migrations import check, upgrade
from parley.stores.sql._pg_writer import PostgresWriter
from parley.stores.sql._writer import SQLiteWriter

if TYPE_CHECKING:
    from parley.stores.sql._notify import PostgresBus

_DRIVERS = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+asyncpg"}
_EXTRAS = {"aiosqlite": "sqlite", "asyncpg": "postgresql"}


def database_url(url: str) -> str:
    """``url`` with the async driver parley uses: ``sqlite:///x.db`` becomes
    ``sqlite+aiosqlite:///x.db``, ``postgresql://...`` (or ``postgres://``) becomes
    ``postgresql+asyncpg://...``. Raises ``ValueError`` for anything else."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url.removeprefix("postgres://")
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend not in _DRIVERS:
        raise ValueError(f"parley stores tasks in SQLite or PostgreSQL, not {backend!r}")
    driver = _DRIVERS[backend]
    if parsed.drivername not in (backend, driver):
        raise ValueError(f"use the driver {driver!r} for {backend}, not {parsed.drivername!r}")
    return parsed.set(drivername=driver).render_as_string(hide_password=False)


def _engine(url: str) -> AsyncEngine:
    url = database_url(url)
    driver = make_url(url).get_driver_name()
    require(driver, extra=_EXTRAS[driver])
    if driver != "aiosqlite":
        return create_async_engine(url, pool_pre_ping=True)
    if _in_memory(make_url(url)):
        # One connection, which is the database: each transaction has it to itself. (The
        # default, StaticPool, hands it to every transaction at once, and one's COMMIT or
        # ROLLBACK would end another's writes half done.)
        return create_async_engine(
            url, poolclass=AsyncAdaptedQueuePool, pool_size=1, max_overflow=0
        )
    engine = create_async_engine(url, connect_args={"timeout": 30})
    event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine


def _in_memory(url: URL) -> bool:
    """Whether a SQLite URL names a database in memory (``sqlite://``, ``:memory:``, or
    a URI filename such as ``file:x?mode=memory&uri=true``)."""
    return not url.database or url.database == ":memory:" or url.query.get("mode") == "memory"


def _sqlite_pragmas(connection: Any, record: Any) -> None:
    # WAL: readers never wait for the writer; synchronous=NORMAL survives a process
    # crash (only an OS crash or power loss can lose the last transactions).
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def insert(connection: AsyncConnection, table: Table) -> Any:
    """The dialect's INSERT for ``table``, with its ``ON CONFLICT`` clauses."""
    dialect: Any = postgresql if connection.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


def _claim_sqlite_file(engine: AsyncEngine) -> int | None:
    """Lock ``<database>.lock`` for this process, or raise ``StoreInUseError``; returns
    the lock file's descriptor.

    A POSIX record lock belongs to the process: every store of this process may open
    the database, a second process may not. The lock goes when the process does, however
    it ends."""
    path = _sqlite_file(engine)
    if path is None:
        return None
    try:
        descriptor = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None  # no such folder, or read-only: SQLite says why when it opens the file
    try:
        fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(descriptor, 32).decode(errors="replace").strip() or "unknown"
        os.close(descriptor)
        raise StoreInUseError(
            f"another process (pid {holder}) is serving the SQLite database {path}. SQLite "
            "serves one process at a time: stop that one, or use PostgreSQL "
            "(--db postgresql://...) to run several processes on one database."
        ) from None
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, str(os.getpid()).encode(), 0)
    return descriptor


class SQLBase:
    """The engine, and the schema check or upgrade on first use.

    Raises ``StoreInUseError`` when another process serves the same SQLite file."""

    def __init__(self, database: str | AsyncEngine, *, migrate: bool = True) -> None:
        owns = not isinstance(database, AsyncEngine)
        self.engine = _engine(database) if isinstance(database, str) else database
        self._process_lock = _claim_sqlite_file(self.engine)
        self._owns_engine = owns
        self._migrate = migrate
        self._ready = False
        self._ready_lock = asyncio.Lock()
        self.writer: Writer = _writer(self.engine)
        """Runs the store's writes (appends, snapshot saves, leases taken): the group
        writer of SQLite or PostgreSQL, which gathers concurrent tasks' writes into
        shared transactions (group commit), or, for an in-memory SQLite database, which
        a connection of its own would not see, ``MemoryWriter`` on the engine's."""

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @property
    def shared(self) -> bool:
        """PostgreSQL may serve several processes; SQLite serves one."""
        return self.engine.dialect.name == "postgresql"

    def bus(self) -> PostgresBus | None:
        """The bus between the processes that share this store: PostgreSQL's
        ``LISTEN/NOTIFY`` on its database. ``None`` for SQLite, which one process uses."""
        if not self.shared:
            return None
        from parley.stores.sql._notify import PostgresBus

        return PostgresBus(self.engine)

    async def _connect(self) -> AsyncEngine:
        if not self._ready:
            async with self._ready_lock:
                if not self._ready:
                    await (upgrade(self.engine) if self._migrate else check(self.engine))
                    self._ready = True
        return self.engine

    async def aclose(self) -> None:
        """Close the connections (and the engine, when the store made it)."""
        await self.writer.aclose()
        if self._owns_engine:
            await self.engine.dispose()


Writer = SQLiteWriter | PostgresWriter | MemoryWriter


def _writer(engine: AsyncEngine) -> Writer:
    url = engine.url
    if url.get_backend_name() == "postgresql":
        return PostgresWriter(engine)
    path = _sqlite_file(engine)
    if path is None or path != url.database:
        return MemoryWriter(engine)  # in memory, or a URI filename a connection of its own
    return SQLiteWriter(path)  # would not open


def _sqlite_file(engine: AsyncEngine) -> str | None:
    """The file of a SQLite database; ``None`` for PostgreSQL or a database in memory
    (``:memory:``, or a URI filename such as ``file:x?mode=memory&uri=true``)."""
    url = engine.url
    path = url.database
    if engine.dialect.name != "sqlite" or not path or _in_memory(url):
        return None
    return path.removeprefix("file:") if url.query.get("uri") == "true" else path
