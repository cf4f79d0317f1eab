"""The typer app behind ``parley``; each command lives in its own module."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Annotated, Any

import typer
from typer.core import TyperOption

import parley
from parley.cli._chat import chat
from parley.cli._check import check
from parley.cli._db import db_app
from parley.cli._inspect import inspect
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
app.command()(inspect)
app.add_typer(db_app)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"parley {parley.__version__}")
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


_METAVARS = {"str": "TEXT", "int": "INTEGER", "float": "SECONDS", "Path": "PATH"}
"""What --help shows after an option that takes a value, by its Python type (typer's own
would be ``<list[Path]>``); an option's own ``metavar`` wins."""


def command() -> Any:
    """``parley`` as the click command typer builds, with its options' values named the
    way command-line help names them: ``--file PATH``, and nothing after a flag."""
    built = typer.main.get_command(app)
    _name_values(built)
    return built


def _name_values(built: Any) -> None:
    for sub in getattr(built, "commands", {}).values():
        _name_values(sub)
    # --help is made on first use, and kept: made here, it is named like the others
    help_option = built.get_help_option(SimpleNamespace(help_option_names=["--help"]))
    for param in [*built.params, help_option]:
        if not isinstance(param, TyperOption) or param.metavar is not None:
            continue
        if param.is_flag:
            param.metavar = ""
        else:
            bare = param.bare_type().removeprefix("list[").removesuffix("]")
            param.metavar = _METAVARS.get(bare, "VALUE")
