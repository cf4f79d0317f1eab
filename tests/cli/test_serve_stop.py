"""Ctrl-C on ``parley serve`` in a real terminal, with a stream open: the first press
stops accepting and lets running streams end for a bounded time, saying so; a second
press stops at once; neither shows a traceback."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.cli.terminal import EXITED, Screen, terminal

STOPPING = "stopping: no new connections"


def _base(screen: Screen) -> str:
    shown = screen.wait_for("try:")
    found = re.search(r"serving .* at (http://127\.0\.0\.1:\d+)/", shown)
    assert found, shown
    return found.group(1)


class Stream:
    """A client following ``message/stream`` in a thread: the states it read, and
    whether the stream ended."""

    def __init__(self, base: str, text: str) -> None:
        self.states: list[str] = []
        self.first = threading.Event()
        self.ended = threading.Event()
        self.error: Exception | None = None
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/stream",
            "params": {
                "message": {
                    "role": "user",
                    "messageId": "m",
                    "parts": [{"kind": "text", "text": text}],
                }
            },
        }
        self.thread = threading.Thread(target=self._follow, args=(base, body), daemon=True)
        self.thread.start()

    def _follow(self, base: str, body: dict[str, object]) -> None:
        try:
            with httpx.stream("POST", f"{base}/", json=body, timeout=60) as answer:
                for line in answer.iter_lines():
                    if line.startswith("data:"):
                        result = json.loads(line[5:])["result"]
                        state = (result.get("status") or {}).get("state")
                        if state:
                            self.states.append(state)
                        self.first.set()
        except httpx.HTTPError as error:
            self.error = error
        finally:
            self.first.set()
            self.ended.set()


def _refused_soon(url: str) -> None:
    """A new connection to ``url`` is refused within a second (the server stops
    accepting at its next tick, a tenth of a second after the signal)."""
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=5, headers={"Connection": "close"})
        except httpx.ConnectError:
            return
        time.sleep(0.05)
    pytest.fail(f"{url} still accepted connections a second after Ctrl-C")


@contextmanager
def served(*options: str) -> Iterator[tuple[Screen, str]]:
    with terminal("serve", "--port", "0", "--db", "memory", *options) as screen:
        yield screen, _base(screen)


def test_first_ctrl_c_lets_an_open_stream_end_and_refuses_new_connections() -> None:
    with served("--timeout-graceful-shutdown", "30") as (screen, base):
        stream = Stream(base, "count to 3")
        assert stream.first.wait(30)
        screen.press("C-c")
        shown = screen.wait_for(STOPPING)
        assert "Ctrl-C again to stop now" in shown
        assert "30 s" in shown
        _refused_soon(f"{base}/.well-known/agent-card.json")
        assert stream.ended.wait(30)
        shown = screen.wait_for(EXITED)
    assert stream.states[-1] == "completed", stream.states
    assert stream.error is None
    assert "Traceback" not in shown
    assert "stopping now" not in shown


def test_streams_still_open_after_the_grace_are_closed() -> None:
    with served("--timeout-graceful-shutdown", "1") as (screen, base):
        stream = Stream(base, "count to 60")
        assert stream.first.wait(30)
        pressed = time.monotonic()
        screen.press("C-c")
        assert stream.ended.wait(15)
        shown = screen.wait_for(EXITED, timeout=15)
        took = time.monotonic() - pressed
    assert took < 10, took
    assert "completed" not in stream.states
    assert "Traceback" not in shown
    assert "Error" not in shown


def test_a_second_ctrl_c_stops_at_once() -> None:
    with served() as (screen, base):  # the default grace: longer than this test waits
        stream = Stream(base, "count to 60")
        assert stream.first.wait(30)
        screen.press("C-c")
        screen.wait_for(STOPPING)
        pressed = time.monotonic()
        screen.press("C-c")
        assert stream.ended.wait(15)
        shown = screen.wait_for(EXITED, timeout=15)
        took = time.monotonic() - pressed
    assert took < 5, took
    assert "stopping now" in shown
    assert "Traceback" not in shown
    assert "Error" not in shown
