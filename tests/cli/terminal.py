"""A real terminal for the CLI tests: tmux runs ``parley`` in a pseudo-terminal of 80
columns and gives back the screen as a person sees it (spinners and all)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.cli.conftest import PARLEY

EXITED = "[parley exited "


class Screen:
    """One tmux session running a shell command; what its 80x40 screen shows."""

    def __init__(self, socket: str, session: str) -> None:
        self.socket = socket
        self.session = session

    def _tmux(self, *args: str) -> str:
        command = ["tmux", "-L", self.socket, *args]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    def text(self) -> str:
        """The screen (and what scrolled off it), as plain text, lines right-trimmed."""
        shown = self._tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", self.session)
        return "\n".join(line.rstrip() for line in shown.splitlines()).strip("\n")

    def type(self, line: str) -> None:
        self._tmux("send-keys", "-t", self.session, "-l", line)
        self._tmux("send-keys", "-t", self.session, "Enter")

    def press(self, key: str) -> None:
        """A key as tmux names it: ``C-c`` is Ctrl-C."""
        self._tmux("send-keys", "-t", self.session, key)

    def wait_for(self, text: str, count: int = 1, timeout: float = 30) -> str:
        """The screen once ``text`` shows on it ``count`` times (bounded by ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if screen.count(text) >= count:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never showed (x{count}); the screen:\n{screen}")
            time.sleep(0.05)  # polling the screen: tmux has no event to wait on


@contextmanager
def terminal(*args: str) -> Iterator[Screen]:
    """``parley *args`` in a fresh 80x40 tmux terminal; the screen ends with
    ``[parley exited N]`` once the command returns."""
    if shutil.which("tmux") is None:
        if os.environ.get("PARLEY_REQUIRE_TERMINAL") == "1":
            pytest.fail("tmux is required (PARLEY_REQUIRE_TERMINAL=1); scripts/test installs it")
        pytest.skip("tmux is not installed: the real-terminal tests need it")
    socket, session = f"parley-test-{uuid.uuid4().hex[:8]}", "cli"
    command = f"{shlex.join([str(PARLEY), *args])}; echo '{EXITED}'$?']'; sleep 600"
    env = {**os.environ, "COLUMNS": "80", "LINES": "40"}
    env.pop("NO_COLOR", None)
    subprocess.run(
        [
            "tmux",
            "-L",
            socket,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "80",
            "-y",
            "40",
            command,
        ],
        check=True,
        env=env,
    )
    try:
        yield Screen(socket, session)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
