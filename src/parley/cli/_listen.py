"""``parley listen``: receive an agent's push notifications and print each verified one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer
import uvicorn

from parley.cli._common import JsonOption, bound_listener, out
from parley.cli._render import show_task
from parley.client import AgentKeys, PushNotification, PushReceiver


def listen(
    agent: Annotated[
        str,
        typer.Argument(help="The agent whose notifications to accept (its base URL)."),
    ],
    port: Annotated[
        int,
        typer.Option("--port", "-p", help="Port to listen on; 0: a free one, shown first."),
    ] = 9000,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    token: Annotated[
        str | None,
        typer.Option("--token", help="Accept only notifications with this token."),
    ] = None,
    jwks: Annotated[
        str | None,
        typer.Option("--jwks", help="The agent's key set URL (default: its well-known one)."),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Receive push notifications on http://HOST:PORT/ and print each one that is signed
    by AGENT (its /.well-known/jwks.json), fresh, untampered and not a replay."""
    keys = AgentKeys(jwks) if jwks else AgentKeys.of_agent(agent_base(agent))

    async def show(notification: PushNotification) -> None:
        if json_output:
            out.print_json(notification.task.to_json().decode())
        else:
            show_task(out, notification.task, Path("."))

    receiver = PushReceiver(show, keys, token=token)
    listener = bound_listener(host, port)
    url = f"http://{host}:{listener.getsockname()[1]}/"  # --port 0: the port it got
    out.print(f"[dim]listening on {url} for notifications from {agent}[/]", soft_wrap=True)
    sys.stdout.flush()  # a script reading the address through a pipe gets it now
    config = uvicorn.Config(receiver, log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[listener])


def agent_base(url: str) -> str:
    """The agent's origin (scheme://host:port) from its base or card URL."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    return f"{parts.scheme}://{parts.netloc}"
