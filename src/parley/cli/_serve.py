"""``parley serve``: run the demo agent, or your own, on uvicorn."""

from __future__ import annotations

import importlib
import sys
from ipaddress import ip_network
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import uvicorn
from rich.console import Console

from parley.cli._db import DB_HELP, DEFAULT_DB, task_store
from parley.server import A2AApp, AgentExecutor, GRPCOptions, SigningKeys, create_app
from parley.server.push import PushSettings
from parley.stores import Store
from parley.types import AgentCard

console = Console(stderr=True)


def serve(
    agent: Annotated[
        str | None,
        typer.Argument(
            help="Your agent as module:attribute: an A2AApp, or an AgentExecutor whose "
            "module also defines `card` (an AgentCard). Default: the demo agent.",
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "warning",
    db: Annotated[str, typer.Option("--db", help=DB_HELP)] = DEFAULT_DB,
    grpc_port: Annotated[
        int | None, typer.Option(help="Also serve gRPC on this port (needs parley[grpc]).")
    ] = None,
    grpc_cert: Annotated[
        Path | None, typer.Option(help="PEM certificate chain: serve gRPC over TLS.")
    ] = None,
    grpc_key: Annotated[Path | None, typer.Option(help="PEM private key of --grpc-cert.")] = None,
    allow_push_to: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-push-to",
            help="CIDR range push webhooks may be in although not public; plain http is "
            "allowed there too (repeatable), e.g. 127.0.0.1/32 for a local receiver.",
        ),
    ] = None,
    signing_key: Annotated[
        list[Path] | None,
        typer.Option(
            "--signing-key",
            help="PEM private key the agent signs with (repeatable: the first signs, all "
            "are published at /.well-known/jwks.json). Default: a fresh key per process.",
        ),
    ] = None,
) -> None:
    """Serve an A2A agent over HTTP (JSON-RPC, and HTTP+JSON with parley[grpc]) and
    optionally gRPC, with its card at /.well-known/agent-card.json."""
    app = _load(agent, task_store(db), _push_options(allow_push_to or [], signing_key or []))
    url = f"http://{host}:{port}/"
    console.print(f"[bold green]parley[/] serving [bold]{app.handler.card.name}[/] at {url}")
    if grpc_port is not None:
        _add_grpc(app, host, grpc_port, grpc_cert, grpc_key)
    console.print(f"  card: {url.rstrip('/')}/.well-known/agent-card.json")
    console.print(f"  try:  parley chat {url}")
    uvicorn.run(app, host=host, port=port, log_level=log_level, lifespan="on")


def _add_grpc(app: A2AApp, host: str, port: int, cert: Path | None, key: Path | None) -> None:
    if (cert is None) != (key is None):
        _fail("--grpc-cert and --grpc-key go together")
    try:
        from parley.protocol.protobuf import load_grpc

        load_grpc()
    except ImportError as error:
        _fail(str(error))
    app.add_grpc(
        GRPCOptions(
            host=host,
            port=port,
            certificate_chain=cert.read_bytes() if cert else None,
            private_key=key.read_bytes() if key else None,
        )
    )
    scheme = "TLS" if cert else "plaintext"
    console.print(f"  gRPC: {host}:{port} ({scheme})")


def _push_options(allow: list[str], keys: list[Path]) -> dict[str, Any]:
    """``create_app`` keyword arguments for the push options given."""
    options: dict[str, Any] = {}
    try:
        if keys:
            options["signing_keys"] = SigningKeys.from_pem(*(key.read_bytes() for key in keys))
        if allow:
            options["push"] = PushSettings(allow=[str(ip_network(r, strict=False)) for r in allow])
    except OSError as error:
        _fail(f"cannot read --signing-key: {error}")
    except ValueError as error:
        _fail(f"--allow-push-to or --signing-key: {error}")
    return options


def _load(target: str | None, store: Store, options: dict[str, Any]) -> A2AApp:
    if target is None:
        from parley.demo import create_demo_app

        return create_demo_app(task_store=store, **options)
    module_name, _, attribute = target.partition(":")
    if not attribute:
        _fail(f"{target!r} is not of the form module:attribute")
    sys.path.insert(0, ".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        _fail(f"cannot import {module_name!r}: {error}")
    value: Any = getattr(module, attribute, None)
    if value is None:
        _fail(f"{module_name!r} has no attribute {attribute!r}")
    if isinstance(value, A2AApp):
        if options:
            _fail(f"{target} is a built A2AApp: give it push settings and keys in code")
        return value  # keeps the store it was built with
    card = getattr(module, "card", None)
    if not isinstance(card, AgentCard):
        _fail(f"{target} is an agent, but {module_name!r} defines no `card` (an AgentCard)")
    executor: AgentExecutor = value
    if "push" in options and not card.capabilities.push_notifications:
        _fail("--allow-push-to: the card does not declare capabilities.pushNotifications")
    return create_app(executor, card, task_store=store, **options)


def _fail(message: str) -> NoReturn:
    console.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(2)
