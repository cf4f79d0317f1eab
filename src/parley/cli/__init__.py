"""The ``parley`` command: serve an agent, and talk to any A2A agent from a terminal.

The top layer: uses ``parley.server`` (``serve``) and ``parley.client`` (everything
else). Needs the ``cli`` extra (typer, rich).
"""

from __future__ import annotations

from parley._extras import MissingExtraError, extra_of, install_line, require


def main() -> None:
    """Entry point of the ``parley`` command."""
    try:
        require("cli", "The parley command")
        from parley.cli._app import command
    except ImportError as error:
        message = str(error) if isinstance(error, MissingExtraError) else _hint(error)
        raise SystemExit(message) from None
    command()(prog_name="parley")


def _hint(error: ImportError) -> str:
    extra = extra_of(error.name or "") or "cli"
    return f"The parley command needs the {extra} extra ({error.name} is missing): " + (
        install_line(extra)
    )


__all__ = ["main"]
