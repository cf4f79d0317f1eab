"""``parley db``: the task database, and the ``--db`` option of ``parley serve``."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from parley.stores import Store, open_store

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from parley.stores.sql import Migration

T = TypeVar("T")

console = Console(stderr=True)

DEFAULT_DB = "sqlite:///parley.db"
DB_HELP = (
    "Where tasks are kept: a SQLAlchemy URL for SQLite or PostgreSQL "
    "(sqlite:///path.db, postgresql://user@host/db), or 'memory'."
)

db_app = typer.Typer(
    name="db", help="Manage the task database.", no_args_is_help=True, add_completion=False
)


def task_store(db: str) -> Store:
    """The store ``--db`` names; exits with a clear message if it cannot be used."""
    try:
        return open_store(db)
    except Exception as error:  # ValueError, ImportError, SQLAlchemy's URL errors: one line
        reason = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        shown = escape(hide_password(db))
        console.print(f"[bold red]error:[/] --db {shown}: {escape(reason)}", soft_wrap=True)
        raise typer.Exit(2) from None


def hide_password(url: str) -> str:
    """``url`` fit to print: a password in it replaced by ``***``."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)


@db_app.command()
def status(db: Annotated[str, typer.Option("--db", help=DB_HELP)] = DEFAULT_DB) -> None:
    """Show the task database's schema revision and the migrations an upgrade would apply."""
    if db == "memory":
        console.print("the memory store has no schema")
        return
    current, migrations = asyncio.run(_pending(db))
    console.print(f"task database at schema revision {current or 'none (no tables yet)'}")
    if not migrations:
        console.print("[bold green]up to date[/]")
        return
    console.print(f"{len(migrations)} to apply with `parley db upgrade`:")
    for migration in migrations:
        console.print(f"  {migration.revision}  {escape(migration.title)}", soft_wrap=True)


@db_app.command()
def upgrade(db: Annotated[str, typer.Option("--db", help=DB_HELP)] = DEFAULT_DB) -> None:
    """Create the task tables, or bring them up to this parley's schema."""
    if db == "memory":
        console.print("nothing to upgrade: the memory store has no schema")
        return
    _, migrations = asyncio.run(_pending(db))
    for migration in migrations:
        console.print(f"applying {migration.revision}  {escape(migration.title)}", soft_wrap=True)
    revision = asyncio.run(_upgrade(db))
    console.print(f"[bold green]parley[/] task database at schema revision {revision}")


async def _pending(db: str) -> tuple[str | None, list[Migration]]:
    from parley.stores.sql import pending

    return await _on_engine(db, pending)


async def _upgrade(db: str) -> str:
    from parley.stores.sql import upgrade

    return await _on_engine(db, upgrade)


async def _on_engine(db: str, use: Callable[[AsyncEngine], Awaitable[T]]) -> T:
    from parley.stores.sql import SQLStore

    store = task_store(db)
    assert isinstance(store, SQLStore)
    try:
        return await use(store.engine)
    finally:
        await store.aclose()
