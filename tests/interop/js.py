"""The official JavaScript A2A SDK (``@a2a-js/sdk``) in a node environment of its own,
and its echo agent.

``js_sdk()`` installs ``tests/interop/js/package-lock.json`` with ``npm ci`` into
``.interop/js`` once and reuses it while the lock is unchanged (a stamp file holds the
lock it was built from). A machine without node and npm, or whose npm cannot reach its
registry, skips the tests that need it, saying why. ``serving_js_agent()`` runs
``js/echo_server.mjs`` with that installation as a separate process on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.interop.sdk import Served, _wait_until_listening
from tests.servers import listening_socket

SOURCE = Path(__file__).resolve().parent / "js"
ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / ".interop" / "js"
FILES = ("package.json", "package-lock.json", "echo_server.mjs")
_OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH")
"""npm's error codes for a registry it cannot reach."""


def js_sdk() -> Path:
    """The folder holding the echo agent and its ``node_modules``, installed (or
    reinstalled for a new lock) when needed, under a lock so concurrent runs install once."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("the JavaScript SDK's interop tests need node and npm on PATH")
    lock_text = (SOURCE / "package-lock.json").read_text()
    stamp = INSTALL / "parley-interop-stamp"
    INSTALL.parent.mkdir(parents=True, exist_ok=True)
    with open(INSTALL.parent / "setup-js.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # other pytest runs may be installing it right now
        if not (stamp.exists() and stamp.read_text() == lock_text):
            shutil.rmtree(INSTALL, ignore_errors=True)
            INSTALL.mkdir()
            _copy_sources()
            _npm_ci(npm)
            stamp.write_text(lock_text)
        _copy_sources()  # the server script may have changed without the lock
    return INSTALL


def _copy_sources() -> None:
    for name in FILES:
        shutil.copyfile(SOURCE / name, INSTALL / name)


def _npm_ci(npm: str) -> None:
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=INSTALL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode == 0:
        return
    shutil.rmtree(INSTALL, ignore_errors=True)
    said = [line.removeprefix("npm error").strip() for line in done.stderr.splitlines()]
    unreachable = [line for line in said if any(code in line for code in _OFFLINE)]
    if unreachable:
        why = next((line for line in unreachable if "FetchError" in line), unreachable[0])
        pytest.skip(f"npm cannot reach its registry to install @a2a-js/sdk ({why})")
    raise RuntimeError(f"npm ci for the JavaScript SDK failed:\n{done.stderr[-4000:]}")


@contextlib.contextmanager
def serving_js_agent(install: Path, timeout: float = 30.0) -> Iterator[Served]:
    """Start the JavaScript SDK's echo agent; yield where it listens once it answers.

    The socket is bound here and handed to node (``--fd``), as ``sdk.serving_peer`` does."""
    node = shutil.which("node")
    assert node is not None  # js_sdk() skipped otherwise
    listener = listening_socket()
    listener.listen()
    process = subprocess.Popen(
        [node, str(install / "echo_server.mjs"), "--fd", str(listener.fileno())],
        cwd=install,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        pass_fds=[listener.fileno()],
    )
    try:
        _wait_until_listening(process, listener.getsockname()[1], timeout)
        yield Served(listener.getsockname()[1])
    finally:
        listener.close()
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
