"""The ``parley`` command: serve an agent, and talk to any A2A agent from a terminal.

The top layer: uses ``parley.server`` (``serve``) and ``parley.client`` (everything
else). Needs the ``cli`` extra (typer, rich).
"""

from __future__ import annotations


def main() -> None:
    """Entry point of the ``parley`` command."""
    try:
        from parley.cli._app import command
    except ImportError as error:  # pragma: no cover - depends on the installed extras
        raise SystemExit(
            f"The parley command needs the cli extra ({error.name} is missing): "
            "pip install 'parley[cli]'"
        ) from None
    command()(prog_name="parley")


__all__ = ["main"]
