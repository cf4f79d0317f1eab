"""Real servers for tests: uvicorn on 127.0.0.1, on a free port, in a background thread."""

from __future__ import annotations

import contextlib
import re
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
    port 0, during lifespan start-up, before uvicorn binds) can be given it meanwhile.
    Until uvicorn listens on it, a connection to it is refused, as to a server that is
    down: a test can hold a webhook's port this way while the webhook is "down"."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port or 0))
    return sock


@contextlib.contextmanager
def running(
    app: Any,
    *,
    host: str = "127.0.0.1",
    timeout: float = 60.0,
    port: int | None = None,
    sock: socket.socket | None = None,
    settings_class: type[uvicorn.Config] = uvicorn.Config,
    **config: Any,
) -> Iterator[str]:
    """Serve ``app`` on uvicorn (on ``sock``, a socket ``listening_socket`` bound and
    held since; or on ``port``, or a free one) and yield its base URL
    (``http://127.0.0.1:PORT``, or ``https://`` when ``config`` has ``ssl_certfile``);
    ``config`` goes to uvicorn (``settings_class``, a ``uvicorn.Config``). ``timeout``:
    for start-up and for shutdown each (10 s was passed on a machine loaded by several
    test runs, with tracemalloc on)."""
    sock = sock or listening_socket(host, port)
    port = sock.getsockname()[1]
    settings = settings_class(
        app, host=host, port=port, log_level="warning", lifespan="on", **config
    )
    server = uvicorn.Server(settings)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + timeout
    try:
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        scheme = "https" if settings.ssl_certfile else "http"
        yield f"{scheme}://{host}:{port}"
    finally:
        # on every path: a server that did not start (yet) is stopped too, not left to
        # serve on a socket nobody owns, and the socket is closed when uvicorn did not
        # (it closes it only once it served on it)
        server.should_exit = True
        thread.join(timeout)
        if not thread.is_alive():
            sock.close()


PARLEY = str(Path(sys.executable).with_name("parley"))
START = 90.0
"""Seconds ``parley serve`` may take to answer: generous, because its imports alone are
slow on a machine loaded by several test runs at once."""
_BANNER = re.compile(rb"serving .* at (http://\S+?)/?\s")


def start_parley(
    arguments: list[str], log: Path, *, port: int = 0, cwd: Path = ROOT
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``parley serve ARGUMENTS --port PORT`` (stderr appended to ``log``); with
    port 0 the system picks a free one when it binds, so no other server can take it
    between a pick and the bind. Returns the process and where its output starts in
    ``log``, for ``parley_address``."""
    with log.open("ab") as errors:
        start = errors.tell()
        process = subprocess.Popen(
            [PARLEY, "serve", *arguments, "--port", str(port)],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    return process, start


def parley_address(
    process: subprocess.Popen[bytes], log: Path, start: int, timeout: float = START
) -> str:
    """The base URL (``http://127.0.0.1:PORT``) a ``parley serve`` started with
    ``start_parley`` says it serves at, once its ``/health`` answers there."""
    deadline = time.monotonic() + timeout
    base = None
    while True:
        if base is None:
            with log.open("rb") as output:
                output.seek(start)
                found = _BANNER.search(output.read())
            base = found.group(1).decode() if found else None
        if base is not None:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                    return base
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"server did not start:\n{log.read_text()}")
        time.sleep(0.05)


@contextlib.contextmanager
def parley_serve(
    arguments: list[str], log: Path, *, port: int = 0, timeout: float = START
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``parley serve ARGUMENTS --port PORT`` (default 0: a free port) in a subprocess
    (stderr appended to ``log``), once its ``/health`` answers: yields the process and
    its base URL."""
    process, start = start_parley(arguments, log, port=port)
    try:
        yield process, parley_address(process, log, start, timeout)
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(10)
