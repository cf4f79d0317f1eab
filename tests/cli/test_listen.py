"""``parley listen`` receives and prints verified push notifications; ``parley send
--push-url`` sets the config that makes the agent post them (docs/push.md)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from parley.demo import create_demo_app
from parley.server.push import PushSettings
from tests.cli.conftest import PARLEY, parley
from tests.servers import running


@pytest.fixture(scope="module")
def pushing_agent() -> Iterator[str]:
    with running(create_demo_app(push=PushSettings(allow=["127.0.0.1/32"]))) as url:
        yield url


def test_listen_prints_what_send_push_url_has_the_agent_post(pushing_agent: str) -> None:
    command = [str(PARLEY), "listen", pushing_agent, "--port", "0", "--token", "s3"]
    with subprocess.Popen(
        [*command, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    ) as listener:
        try:
            assert listener.stdout is not None
            first = listener.stdout.readline()  # where it listens (a free port: --port 0)
            found = re.match(r"listening on (http://127\.0\.0\.1:\d+/) for notif", first)
            assert found, f"parley listen said {first!r}"
            hook = found.group(1)
            assert not hook.endswith(":0/")
            sent = parley("send", pushing_agent, "hello", "--push-url", hook, "--push-token", "s3")
            assert sent.returncode == 0, sent.stderr
            # a notification with the wrong token is refused, and not printed
            forged = httpx.post(hook, content=b"{}", headers={"X-A2A-Notification-Token": "x"})
            assert forged.status_code == 401
            tasks = _read_tasks(listener, until="completed")
        finally:
            listener.terminate()
    states = [task["status"]["state"] for task in tasks]
    assert states[0] == "working"  # the demo is an @agent: its task is created working
    assert states[-1] == "completed"
    assert len({task["id"] for task in tasks}) == 1


def _read_tasks(listener: subprocess.Popen[str], until: str) -> list[dict[str, Any]]:
    """The Tasks ``listen --json`` printed, up to one in state ``until``."""
    assert listener.stdout is not None
    decoder, buffer, tasks = json.JSONDecoder(), "", []
    for line in listener.stdout:  # bounded: the test's timeout ends a silent listener
        if not buffer and not line.startswith("{"):
            continue  # the "listening on" line
        buffer += line
        try:
            task, _ = decoder.raw_decode(buffer.strip())
        except ValueError:
            continue
        buffer = ""
        tasks.append(task)
        if task["status"]["state"] == until:
            return tasks
    pytest.fail(f"listen ended after {len(tasks)} tasks")
