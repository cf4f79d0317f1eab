"""``parley serve``: run the demo agent, or your own, on uvicorn.

Everything that can fail at start-up fails before anything is announced, with one line
and exit code 2: the options, the module, the store ``--db`` names (opened and used
once, so an unreachable PostgreSQL or a SQLite path that cannot be written shows here),
the HTTP and gRPC ports. The app's lifespan runs here, around uvicorn, not inside it.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from contextlib import nullcontext, suppress
from ipaddress import ip_network
from pathlib import Path
from typing import Annotated, Any

import typer
import uvicorn
from rich.markup import escape
from uvicorn.config import LOG_LEVELS

from parley.cli._common import bound_listener
from parley.cli._db import DB_HELP, DEFAULT_DB, hide_password
from parley.cli._deadlines import DEFAULT_BODY_TIMEOUT, DEFAULT_HEAD_TIMEOUT, DeadlineConfig
from parley.cli._observe import LogFormat, observe, uvicorn_log_config
from parley.cli._serve_target import console, fail, load
from parley.cli._stopping import DEFAULT_GRACE, StoppingServer
from parley.server import (
    A2AApp,
    GRPCOptions,
    SigningKeys,
    TrustedProxies,
)
from parley.server.push import PushSettings
from parley.server.tasks._bus import open_bus
from parley.stores import Store

_STORE_MODULES = ("sqlalchemy", "asyncpg", "aiosqlite", "sqlite3", "alembic", "parley.stores")


def uvicorn_config(
    app: Any,
    log_level: str,
    head_timeout: float = DEFAULT_HEAD_TIMEOUT,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    log_format: LogFormat = LogFormat.text,
) -> DeadlineConfig:
    """uvicorn's settings for ``parley serve``.

    X-Forwarded-* are the app's to judge (--forwarded-allow-ips): uvicorn's own handling
    would replace the proxy's address with the client's before the app sees it. The access
    log is on only at a level that writes its lines (INFO or below): above it (warning,
    the default) uvicorn would still work out each request's client and quoted path for a
    line its logger then drops, about a microsecond a request. A request's head and body
    each have a deadline to arrive (``_deadlines``).
    """
    level = LOG_LEVELS.get(log_level.lower(), logging.INFO)
    return DeadlineConfig(
        app,
        head_timeout=head_timeout,
        body_timeout=body_timeout,
        log_level=log_level,
        access_log=level <= logging.INFO,
        log_config=uvicorn_log_config(log_format),
        lifespan="off",
        proxy_headers=False,
    )


def serve(
    agent: Annotated[
        str | None,
        typer.Argument(
            help="Your agent as module:attribute: an A2AApp, or an AgentExecutor whose "
            "module also defines `card` (an AgentCard). Default: the demo agent.",
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(help="Port to listen on; 0: a free one, shown in the first line.")
    ] = 8000,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "warning",
    log_format: Annotated[
        LogFormat,
        typer.Option(
            help="text, or json: one JSON object a line (with trace_id and span_id while "
            "a span is active), for log pipelines."
        ),
    ] = LogFormat.text,
    otel_console: Annotated[
        bool,
        typer.Option(
            help="Print spans and metrics to stdout (development). OTEL_* environment "
            "variables configure the rest (docs/observability.md); needs "
            "parley-a2a\\[telemetry].",
        ),
    ] = False,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help=DB_HELP + f" Default: {DEFAULT_DB}. Not for a module:attribute that is "
            "an A2AApp: that app has its own store.",
            show_default=False,
        ),
    ] = None,
    bus: Annotated[
        str | None,
        typer.Option(
            help="With several processes on one PostgreSQL --db: carry event notes over "
            "Redis (redis://host:6379) instead of PostgreSQL LISTEN/NOTIFY. Needs "
            "parley\\[redis]."
        ),
    ] = None,
    lease_ttl: Annotated[
        float | None,
        typer.Option(
            help="With several processes on one PostgreSQL --db: seconds a task's lease "
            "lasts without renewal (how soon a crashed process's tasks are settled; "
            "default 10).",
            show_default=False,
        ),
    ] = None,
    grpc_port: Annotated[
        int | None, typer.Option(help="Also serve gRPC on this port (needs parley-a2a\\[grpc]).")
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
    api_key: Annotated[
        list[str] | None,
        typer.Option(
            "--api-key",
            metavar="NAME:SECRET",
            help="Require an API key in header X-API-Key, declared in the card: SECRET is "
            "the key of the principal NAME, who owns the tasks it creates (repeatable).",
        ),
    ] = None,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(
            "--forwarded-allow-ips",
            envvar="FORWARDED_ALLOW_IPS",
            help="Proxies (IPs or networks, comma-separated, * for any) whose "
            "X-Forwarded-Proto/Host are believed. Default: 127.0.0.1.",
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
    timeout_request_head: Annotated[
        float,
        typer.Option(
            help="Seconds a request's line and headers may take to arrive; a connection "
            "slower than that is answered 408 and closed.",
            min=0.001,
        ),
    ] = DEFAULT_HEAD_TIMEOUT,
    timeout_request_body: Annotated[
        float,
        typer.Option(
            help="Seconds a request's declared body may take to arrive once its headers "
            "are in; a connection slower than that is closed.",
            min=0.001,
        ),
    ] = DEFAULT_BODY_TIMEOUT,
    timeout_graceful_shutdown: Annotated[
        float,
        typer.Option(
            help="On Ctrl-C or SIGTERM: seconds running requests and streams have to end "
            "before their connections are closed (a second Ctrl-C closes them at once).",
            min=0,
        ),
    ] = DEFAULT_GRACE,
) -> None:
    """Serve an A2A agent over HTTP (JSON-RPC, and HTTP+JSON with parley\\[grpc]) and
    optionally gRPC, with its card at /.well-known/agent-card.json."""
    try:
        observe(log_format, log_level, otel_console)
    except RuntimeError as error:
        fail(str(error))
    options = _push_options(allow_push_to or [], signing_key or [])
    options.update(_sharing_options(bus, lease_ttl))
    app, opened = load(agent, db, options, _api_keys(api_key or []))
    if forwarded_allow_ips is not None:
        try:
            app.proxies = TrustedProxies(forwarded_allow_ips)
        except ValueError as error:
            fail(f"--forwarded-allow-ips: {error}")
    if grpc_port is not None:
        _add_grpc(app, host, grpc_port, grpc_cert, grpc_key)
    listener = bound_listener(host, port)
    config = uvicorn_config(app, log_level, timeout_request_head, timeout_request_body, log_format)
    server = StoppingServer(config, timeout_graceful_shutdown, _say)
    with (
        suppress(KeyboardInterrupt),  # Ctrl-C before the signals are taken: nothing runs yet
        asyncio.Runner(loop_factory=config.get_loop_factory()) as runner,  # uvloop if there
    ):
        bound = listener.getsockname()[1]  # --port 0: the one the system gave
        runner.run(_serve(app, opened, server, listener, db, _banner(app, host, bound)))


async def _serve(
    app: A2AApp,
    opened: Store | None,
    server: uvicorn.Server,
    listener: socket.socket,
    db: str | None,
    banner: str,
) -> None:
    # Signals are held until the agent has stopped too (uvicorn re-raises them when its
    # own serve returns, which would end the process before the lifespan's exit).
    with server.capture_signals():
        started = False
        try:
            async with app.lifespan():
                started = True
                console.print(banner, soft_wrap=True)  # URLs whole, for people and scripts
                await server.serve(sockets=[listener])
        except Exception as error:
            if started:
                raise
            fail(f"cannot start {app.handler.card.name}: {_reason(error, db)}")
        finally:
            # The store --db opened is closed here, after the agent's runs have stopped:
            # what is queued is committed, and SQLite folds its WAL into the database.
            # After a failed start the store is what failed: its one-line error stands.
            if opened is not None:
                with suppress(Exception) if not started else nullcontext():
                    await opened.aclose()


def _banner(app: A2AApp, host: str, port: int) -> str:
    url = f"http://{host}:{port}/"
    lines = [f"[bold green]parley[/] serving [bold]{escape(app.handler.card.name)}[/] at {url}"]
    if app.grpc_options is not None:
        scheme = "TLS" if app.grpc_options.tls else "plaintext"
        lines.append(f"  gRPC: {host}:{app.grpc_options.port} ({scheme})")
    if app.authenticator is not None:
        lines.append("  auth: an API key in header X-API-Key (--api-key)")
    lines.append(f"  card: {url.rstrip('/')}/.well-known/agent-card.json")
    lines.append(f"  try:  parley chat {url}")
    return "\n".join(lines)


def _add_grpc(app: A2AApp, host: str, port: int, cert: Path | None, key: Path | None) -> None:
    if (cert is None) != (key is None):
        fail("--grpc-cert and --grpc-key go together")
    try:
        from parley.protocol.protobuf import load_grpc

        load_grpc()
    except ImportError as error:
        fail(str(error))
    try:
        chain = cert.read_bytes() if cert else None
        private_key = key.read_bytes() if key else None
    except OSError as error:
        fail(f"cannot read {error.filename}: {error.strerror}")
    if port:
        bound_listener(host, port).close()  # in use: one line here, not grpc's own log
    app.add_grpc(
        GRPCOptions(host=host, port=port, certificate_chain=chain, private_key=private_key)
    )


def _sharing_options(bus: str | None, lease_ttl: float | None) -> dict[str, Any]:
    """``create_app`` keyword arguments for --bus and --lease-ttl."""
    options: dict[str, Any] = {}
    if bus is not None:
        try:
            options["bus"] = open_bus(bus)
        except (ValueError, ImportError) as error:
            fail(f"--bus {bus}: {error}")
    if lease_ttl is not None:
        if lease_ttl <= 0:
            fail("--lease-ttl must be more than 0 seconds")
        options["lease_ttl"] = lease_ttl
    return options


def _push_options(allow: list[str], keys: list[Path]) -> dict[str, Any]:
    """``create_app`` keyword arguments for the push options given."""
    options: dict[str, Any] = {}
    try:
        if keys:
            options["signing_keys"] = SigningKeys.from_pem(*(key.read_bytes() for key in keys))
        if allow:
            options["push"] = PushSettings(allow=[str(ip_network(r, strict=False)) for r in allow])
    except OSError as error:
        fail(f"cannot read --signing-key: {error}")
    except ValueError as error:
        fail(f"--allow-push-to or --signing-key: {error}")
    return options


def _api_keys(values: list[str]) -> dict[str, str]:
    """``--api-key NAME:SECRET`` values as principal name -> key."""
    keys: dict[str, str] = {}
    for value in values:
        name, sep, secret = value.partition(":")
        if not sep or not name or not secret:
            fail(f"--api-key takes NAME:SECRET, not {value.split(':')[0]!r}...")
        if name in keys:
            fail(f"--api-key names {name!r} twice")
        keys[name] = secret
    return keys


def _reason(error: Exception, db: str | None) -> str:
    """One line for what stopped the start: the database's own words (not SQLAlchemy's
    wrapping), with the ``--db`` it came from."""
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    if isinstance(cause, OSError) and cause.strerror:
        text = cause.strerror
    from_store = type(error).__module__.startswith(_STORE_MODULES) or isinstance(
        error, ConnectionError | socket.gaierror
    )
    if from_store:
        shown = hide_password(db or DEFAULT_DB)
        return f"the task store cannot be used: {text} (--db {shown})"
    return text


def _say(line: str) -> None:
    console.print(f"[yellow]{escape(line)}[/]", soft_wrap=True)
