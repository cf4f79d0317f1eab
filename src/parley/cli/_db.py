"""``parley db``: the task database, and the ``--db`` option of ``parley serve``."""

from __future__ import annotations

import asyncio
import re
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from parley.stores import Store, open_store

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
def upgrade(db: Annotated[str, typer.Option("--db", help=DB_HELP)] = DEFAULT_DB) -> None:
    """Create the task tables, or bring them up to this parley's schema."""
    if db == "memory":
        console.print("nothing to upgrade: the memory store has no schema")
        return
    revision = asyncio.run(_upgrade(db))
    console.print(f"[bold green]parley[/] task database at schema revision {revision}")


async def _upgrade(db: str) -> str:
    from parley.stores.sql import SQLStore, upgrade

    store = task_store(db)
    assert isinstance(store, SQLStore)
    try:
        return await upgrade(store.engine)
    finally:
        await store.aclose()
