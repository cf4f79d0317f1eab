"""The typer app behind ``parley``; each command lives in its own module."""

from __future__ import annotations

import typer

from parley.cli._chat import chat
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
app.add_typer(db_app)


@app.callback()
def _root() -> None:
    """Serve A2A agents and talk to them."""
