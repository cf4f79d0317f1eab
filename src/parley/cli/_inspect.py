"""``parley inspect``: the web inspector, served on this machine, opened in the browser."""

from __future__ import annotations

import secrets
import socket
import sys
import threading
import webbrowser
from typing import Annotated
from urllib.parse import urlencode

import typer
import uvicorn

from parley.cli._common import bound_listener, out
from parley.inspect import InspectorApp, create_inspector_app

_WILDCARDS = {"0.0.0.0", "::", ""}
SHUTDOWN_GRACE = 5
"""Seconds open responses (a chat's stream) get to finish once the inspector stops."""


def inspect(
    agent: Annotated[
        str | None,
        typer.Argument(help="The agent to open connected to (its base or card URL)."),
    ] = None,
    port: Annotated[int, typer.Option("--port", "-p", help="Port to serve on; 0: a free one.")] = 0,
    host: Annotated[
        str, typer.Option("--host", help="Address to serve on (only this machine by default).")
    ] = "127.0.0.1",
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the address; do not open a browser.")
    ] = False,
) -> None:
    """Serve a web page to talk to any A2A agent (card, chat, task timeline, wire log,
    push notifications) and open it in the browser. The address carries a secret token:
    only who has it can use the inspector."""
    listener = bound_listener(host, port)
    port = listener.getsockname()[1]
    token = secrets.token_urlsafe(24)
    app = create_inspector_app(token, served_hosts(host, port), port=port)
    url = page_address(host, port, token, agent)
    out.print(f"parley inspect: {url}", soft_wrap=True, highlight=False)
    sys.stdout.flush()  # a script reading the address through a pipe gets it now
    if not no_browser:
        # the listener queues the browser's connection until uvicorn accepts it
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=SHUTDOWN_GRACE
    )
    _Server(config, app).run(sockets=[listener])


def served_hosts(host: str, port: int) -> list[str]:
    """The ``Host`` values the inspector answers to; none listed (any) on a wildcard."""
    if host in _WILDCARDS:
        return []
    names = {host, f"[{host}]" if ":" in host else host}
    if host in ("127.0.0.1", "::1", "localhost"):
        names |= {"localhost", "127.0.0.1", "[::1]"}
    return [f"{name}:{port}" for name in sorted(names)]


def page_address(host: str, port: int, token: str, agent: str | None) -> str:
    """The address to open: the page, its token, and the agent to connect to."""
    shown = "127.0.0.1" if host in _WILDCARDS else (f"[{host}]" if ":" in host else host)
    query = {"token": token, **({"agent": agent} if agent else {})}
    return f"http://{shown}:{port}/?{urlencode(query)}"


class _Server(uvicorn.Server):
    """uvicorn, ending the inspector's live feeds as it stops: a page keeps one open,
    and uvicorn waits for open responses to end before it exits."""

    def __init__(self, config: uvicorn.Config, app: InspectorApp) -> None:
        super().__init__(config)
        self.inspector = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await self.inspector.aclose()
        await super().shutdown(sockets)
