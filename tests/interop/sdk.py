"""The official A2A SDK in a virtual environment of its own, and its peer processes.

``sdk_python()`` makes ``.interop/venv`` with the pinned ``a2a-sdk`` once and reuses it
while the pin is unchanged (a stamp file holds the requirement it was built for). The
SDK never enters parley's own environment: the peers in ``peers/`` run with that venv's
python as separate processes on 127.0.0.1 and talk to parley over real sockets.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.servers import listening_socket

SDK_VERSION = "0.3.26"
REQUIREMENTS = (f"a2a-sdk[http-server,grpc]=={SDK_VERSION}", "uvicorn[standard]>=0.30")
ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".interop" / "venv"
SDK1_VERSION = "1.3.0"
"""The a2a-sdk that speaks A2A 1.0 first (and 0.3 as a compatibility layer)."""
SDK1_REQUIREMENTS = (
    f"a2a-sdk[http-server,grpc,signing]=={SDK1_VERSION}",
    "uvicorn[standard]>=0.30",
)
VENV1 = ROOT / ".interop" / "venv-1"
PEERS = Path(__file__).resolve().parent / "peers"


def sdk_python() -> Path:
    """The python of the interop venv, created (or rebuilt for a new pin) when needed."""
    return venv_python(VENV, REQUIREMENTS)


def sdk1_python() -> Path:
    """The python of the venv holding a2a-sdk 1.3 (A2A 1.0)."""
    return venv_python(VENV1, SDK1_REQUIREMENTS)


def venv_python(venv: Path, requirements: tuple[str, ...]) -> Path:
    """The python of a venv at ``venv`` holding ``requirements``, created (or rebuilt when
    they change) under a lock, so concurrent runs build it once."""
    python = venv / "bin" / "python"
    stamp = venv / "parley-interop-stamp"
    wanted = "\n".join(requirements)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / "setup.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # other pytest runs may be building it right now
        if python.exists() and stamp.exists() and stamp.read_text() == wanted:
            return python
        shutil.rmtree(venv, ignore_errors=True)
        _create(venv, requirements)
        stamp.write_text(wanted)
    return python


def _create(venv: Path, requirements: tuple[str, ...]) -> None:
    python = venv / "bin" / "python"
    uv = shutil.which("uv")
    if uv is not None:
        _run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)])
        _run([uv, "pip", "install", "--quiet", "--python", str(python), *requirements])
    else:
        _run([sys.executable, "-m", "venv", str(venv)])
        _run([str(python), "-m", "pip", "install", "--quiet", *requirements])


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"setting up the interop venv failed: {' '.join(command)}\n{done.stderr[-4000:]}"
        )


def run_peer(python: Path, script: str, *args: str, timeout: float = 60.0) -> list[dict[str, Any]]:
    """Run a peer script to its end; its stdout is one JSON object per line."""
    done = subprocess.run(
        [str(python), str(PEERS / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=_peer_env(),
    )
    if done.returncode != 0:
        raise AssertionError(f"peer {script} failed ({done.returncode}):\n{done.stderr[-6000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


@dataclass(frozen=True)
class Served:
    """Where a peer server listens."""

    port: int
    """Its HTTP port (the card, and JSON-RPC or HTTP+JSON)."""
    grpc_port: int | None = None
    """Its gRPC port, when it serves gRPC."""


@contextlib.contextmanager
def serving_peer(
    python: Path, script: str, *args: str, grpc: bool = False, timeout: float = 30.0
) -> Iterator[Served]:
    """Start a peer server; yield where it listens once it answers.

    Race-free, as ``tests.servers.parley_serve``: the HTTP socket is bound here and handed
    to the peer (``--fd``), so no other process can take its port between a pick and a
    bind; a peer serving gRPC (``grpc``) binds port 0 and says which port it got on the
    first line of its stdout."""
    listener = listening_socket()
    process = subprocess.Popen(
        [str(python), str(PEERS / script), "--fd", str(listener.fileno()), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_peer_env(),
        pass_fds=[listener.fileno()],
    )
    try:
        grpc_port = _grpc_port(process) if grpc else None
        port = listener.getsockname()[1]
        _wait_until_listening(process, port, timeout)
        yield Served(port, grpc_port)
    finally:
        listener.close()
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def _grpc_port(process: subprocess.Popen[bytes]) -> int:
    assert process.stdout is not None
    line = process.stdout.readline().decode()  # written before the peer serves anything
    if not line.startswith("grpc-port "):
        error = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise AssertionError(f"peer server did not say its gRPC port ({line!r}):\n{error[-6000:]}")
    return int(line.split()[1])


def _wait_until_listening(process: subprocess.Popen[bytes], port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise AssertionError(f"peer server exited ({process.returncode}):\n{error[-6000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json").is_success:
                return
        time.sleep(0.1)
    raise AssertionError(f"peer server did not answer on port {port} within {timeout} s")


def _peer_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["PYTHONUNBUFFERED"] = "1"
    return env
