"""The typer app behind ``parley``; each command lives in its own module."""

from __future__ import annotations

from importlib.metadata import version
from typing import Annotated

import typer

from parley.cli._chat import chat
from parley.cli._check import check
from parley.cli._db import db_app
from parley.cli._listen import listen
from parley.cli._serve import serve
from parley.cli._talk import cancel, card, get, resubscribe, send

app = typer.Typer(
    name="parley",
    help="Serve A2A agents and talk to them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(serve)
app.command()(card)
app.command()(send)
app.command()(get)
app.command()(cancel)
app.command()(resubscribe)
app.command()(chat)
app.command()(listen)
app.command()(check)
app.add_typer(db_app)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"parley {version('parley')}")
        raise typer.Exit


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Show parley's version and exit.",
            is_eager=True,
            callback=_show_version,
        ),
    ] = False,
) -> None:
    """Serve A2A agents and talk to them."""
