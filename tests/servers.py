"""Real servers for tests: uvicorn on 127.0.0.1, on a free port, in a background thread."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parents[1]


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def listening_socket(host: str = "127.0.0.1", port: int | None = None) -> socket.socket:
    """A socket bound to ``port`` (or a free one) for uvicorn to serve on (``sockets=``):
    the port is held from here on, so nothing the app starts first (a gRPC server on
    port 0, during lifespan start-up, before uvicorn binds) can be given it meanwhile."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port or 0))
    return sock


@contextlib.contextmanager
def running(
    app: Any,
    *,
    host: str = "127.0.0.1",
    timeout: float = 10.0,
    port: int | None = None,
    **config: Any,
) -> Iterator[str]:
    """Serve ``app`` on uvicorn (on ``port``, or a free one) and yield its base URL
    (``http://127.0.0.1:PORT``, or ``https://`` when ``config`` has ``ssl_certfile``);
    ``config`` goes to uvicorn."""
    sock = listening_socket(host, port)
    port = sock.getsockname()[1]
    settings = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="on", **config
    )
    server = uvicorn.Server(settings)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        scheme = "https" if settings.ssl_certfile else "http"
        yield f"{scheme}://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)


@contextlib.contextmanager
def parley_serve(
    arguments: list[str], log: Path, *, port: int | None = None, timeout: float = 30.0
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``parley serve ARGUMENTS --port PORT`` in a subprocess (stderr appended to
    ``log``), once its ``/health`` answers: yields the process and its base URL."""
    port = free_port() if port is None else port
    command = [str(Path(sys.executable).with_name("parley")), "serve", *arguments]
    with log.open("ab") as errors:
        process = subprocess.Popen(
            [*command, "--port", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=errors
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield process, base
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(10)
