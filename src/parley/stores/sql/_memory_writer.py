"""The writer of an in-memory SQLite database (``sqlite://``).

Such a database lives in one connection, the engine's: a group writer's connection of
its own would open another, empty database. So ``MemoryWriter`` runs the store's writes
(``_group``: the same statements the group writers run) on a connection of the engine,
each in a transaction of its own, one at a time. There is no disk to wait for, so
nothing is gained by gathering writes into shared commits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from parley.stores.sql._writer import Executes
    from parley.telemetry import Telemetry


class MemoryWriter:
    """Runs each write in a transaction of its own on the engine's connection."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.telemetry: Telemetry | None = None
        """Unused: a write here is the caller's own transaction, with no batch to trace."""

    async def submit(self, write: Callable[[Executes], Any]) -> Any:
        """Run ``write`` in a transaction of its own; returns its result once committed,
        or raises what it raised (nothing of it stored)."""
        async with self.engine.begin() as connection:
            return await connection.run_sync(lambda sync: write(_Driver(sync)))

    async def aclose(self) -> None:
        """Nothing to close: the engine is the store's."""


class _Driver:
    """A SQLAlchemy connection as the ``sqlite3`` connection a write expects: statements
    in SQLite's own SQL with positional parameters, and the driver's own errors (such as
    ``sqlite3.IntegrityError`` for a sequence number already logged)."""

    __slots__ = ("_connection",)

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self._run(sql, tuple(parameters))

    def executemany(self, sql: str, rows: Any, /) -> Any:
        return self._run(sql, [tuple(row) for row in rows])

    def _run(self, sql: str, parameters: Any) -> Any:
        try:
            return self._connection.exec_driver_sql(sql, parameters)
        except DBAPIError as error:
            if error.orig is None:
                raise
            raise error.orig from None
