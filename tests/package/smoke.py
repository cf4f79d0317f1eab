"""Run inside a fresh virtual environment holding only the built wheel and the extras
named on the command line: check that every public module imports when its extras are
there and fails with one line naming the extra when they are not, then use what the
extras bring. Prints ``ok`` last; any failure is an exception (exit status 1).

    python smoke.py EXTRAS CONFIG_JSON

EXTRAS is a comma-separated list (empty for the core). CONFIG_JSON may give ``agent``
(the URL of an agent served outside this environment, with a gRPC interface),
``postgres`` (a PostgreSQL URL) and ``redis`` (a Redis URL).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import pkgutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

NEEDS: dict[str, set[str]] = {
    "parley.server": {"server"},
    "parley.demo": {"server"},
    "parley.inspect": {"server"},
    "parley.stores.sql": {"sqlite", "postgresql"},
}
"""Public modules that need an extra (any one of those named), by package prefix; every
other public module needs none."""

IMPLIES = {
    "cli": {"server", "sqlite"},
    "sqlite": {"server"},
    "postgresql": {"server"},
    "redis": {"server"},
    "all": {"server", "grpc", "sqlite", "postgresql", "redis", "cli", "telemetry"},
}


def installed(extras: set[str]) -> set[str]:
    """``extras`` with the extras they bring along."""
    every = set(extras)
    for extra in extras:
        every |= IMPLIES.get(extra, set())
    return every


def needs(module: str) -> set[str]:
    for prefix, extras in NEEDS.items():
        if module == prefix or module.startswith(prefix + "."):
            return extras
    return set()


def public_modules() -> list[str]:
    import parley

    names = ["parley"]
    for info in pkgutil.walk_packages(parley.__path__, "parley.", onerror=lambda _: None):
        parts = info.name.split(".")
        # migrations/ holds alembic's scripts, run by alembic, not modules to import
        if not any(part.startswith("_") or part == "migrations" for part in parts):
            names.append(info.name)
    return names


def check_imports(extras: set[str]) -> None:
    for module in public_modules():
        wanted = needs(module)
        if not wanted or wanted & extras:
            importlib.import_module(module)
            continue
        try:
            importlib.import_module(module)
        except ImportError as error:
            message = str(error)
            assert "\n" not in message, f"{module}: a message of more than one line: {message}"
            assert "pip install 'parley-a2a[" in message, f"{module}: {message}"
            assert any(f"[{extra}]" in message for extra in wanted), f"{module}: {message}"
        else:
            raise AssertionError(f"{module} imported without the {wanted} extra")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def send_and_read(url: str, **options: Any) -> None:
    from parley.client import connect, text_of
    from parley.types import Task

    async with connect(url, **options) as client:
        task = await client.send_message("hello")
        assert isinstance(task, Task), task
        assert task.status.state.value == "completed", task
        assert "hello" in text_of(task), text_of(task)


async def serve_and_send(store_url: str, bus_url: str | None = None) -> None:
    """Serve an agent with the library on ``store_url`` (and a Redis bus), send to it."""
    import uvicorn

    from parley.server import AgentContext, RedisBus, agent, create_app
    from parley.stores import open_store
    from parley.types import AgentCapabilities, AgentCard

    @agent
    async def echo(ctx: AgentContext) -> AsyncIterator[str]:
        yield f"you said {ctx.text}"

    card = AgentCard(
        name="Echo",
        description="Says back what it is told.",
        url="",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[],
    )
    bus = RedisBus(bus_url) if bus_url else None
    app = create_app(echo, card, task_store=open_store(store_url), bus=bus)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not serving.done(), "the server did not start"
            await asyncio.sleep(0.05)
        await send_and_read(f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        await serving


def command_line(workdir: Path) -> None:
    """``parley --version``, then ``parley serve --db memory`` answering ``parley send``."""
    parley = Path(sys.executable).with_name("parley")
    version = subprocess.run([parley, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip(), version
    port = free_port()
    server = subprocess.Popen(
        [parley, "serve", "--db", "memory", "--port", str(port)],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            sent = subprocess.run(
                [parley, "send", url, "tell me a joke"], capture_output=True, text=True
            )
            if sent.returncode == 0:
                assert sent.stdout.strip(), sent
                return
            assert server.poll() is None, server.communicate()[1]
            assert time.monotonic() < deadline, sent.stderr
            time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(30)


def main() -> None:
    asked = {extra for extra in sys.argv[1].split(",") if extra}
    config: dict[str, str] = json.loads(sys.argv[2])
    extras = installed(asked)
    check_imports(extras)
    with tempfile.TemporaryDirectory() as workdir:
        if "cli" in extras:
            command_line(Path(workdir))
        if "sqlite" in asked:
            asyncio.run(serve_and_send(f"sqlite:///{workdir}/tasks.db"))
        if "postgresql" in asked:
            asyncio.run(serve_and_send(config["postgres"]))
        if "redis" in asked:
            asyncio.run(serve_and_send("memory", bus_url=config["redis"]))
        if asked == {"server"}:
            asyncio.run(serve_and_send("memory"))
    if not extras:
        asyncio.run(send_and_read(config["agent"], transports=["JSONRPC", "HTTP+JSON"]))
    if "grpc" in asked:
        asyncio.run(send_and_read(config["agent"], transports=["GRPC"]))
    if "telemetry" in extras:
        from opentelemetry.sdk.trace import TracerProvider

        from parley.telemetry import open_telemetry

        assert open_telemetry(tracer_provider=TracerProvider()) is not None
    print("ok")


if __name__ == "__main__":
    main()
