"""Tasks survive a SIGKILL of the server: events stay in order, the task ends clearly.

The server runs as ``parley serve --db sqlite+aiosqlite:///...`` in a subprocess, is
killed with SIGKILL while it streams, and restarted on the same database.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import connect_sse

from parley.server.tasks._recovery import RESTARTED
from tests.servers import parley_serve


def _server(
    database: str, log: Path
) -> AbstractContextManager[tuple[subprocess.Popen[bytes], str]]:
    return parley_serve(["tests.stores.slow_agent:agent", "--db", database], log)


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _send(text: str) -> dict[str, Any]:
    message = {
        "role": "user",
        "messageId": "m-restart",
        "kind": "message",
        "parts": [{"kind": "text", "text": text}],
    }
    return _rpc("message/stream", {"message": message})


def _events(
    client: httpx.Client,
    base: str,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
    limit: int | None = None,
) -> list[tuple[int, Any]]:
    seen: list[tuple[int, Any]] = []
    with connect_sse(client, "POST", f"{base}/", json=body, headers=dict(headers or {})) as source:
        for sse in source.iter_sse():
            seen.append((int(sse.id), json.loads(sse.data)["result"]))
            if limit is not None and len(seen) >= limit:
                break
    return seen


def test_sigkill_during_a_stream_then_restart(tmp_path: Path) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"
    with (
        _server(database, tmp_path / "server.log") as (process, base),
        httpx.Client(timeout=30) as client,
    ):
        before = _events(client, base, _send("go"), limit=60)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    task_id = before[0][1]["id"]
    assert [sequence for sequence, _ in before] == list(range(1, 61))

    with (
        _server(database, tmp_path / "server.log") as (_, base),
        httpx.Client(timeout=30) as client,
    ):
        got = client.post(f"{base}/", json=_rpc("tasks/get", {"id": task_id})).json()["result"]
        assert got["status"]["state"] == "failed"
        assert got["status"]["message"]["parts"][0]["text"] == RESTARTED
        replay = _events(
            client, base, _rpc("tasks/resubscribe", {"id": task_id}), headers={"Last-Event-ID": "0"}
        )
    sequences = [sequence for sequence, _ in replay]
    assert sequences == list(range(1, len(replay) + 1)), "no gap, no duplicate, in order"
    # Every event the client saw before the kill is stored, unchanged, under its number.
    assert replay[: len(before)] == before
    assert len(replay) > len(before)
    last = replay[-1][1]
    assert last["kind"] == "status-update"
    assert (last["status"]["state"], last["final"]) == ("failed", True)
    print(f"restart: {len(before)} events seen before SIGKILL, {len(replay)} replayed after")
