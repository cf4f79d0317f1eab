"""Several ``parley serve`` processes on one PostgreSQL database (and one SQLite file).

Three processes of the demo agent share a database of their own (created and dropped
here), behind no load balancer: the client spreads its calls over them. Multi-turn
answers, cancel, streams and resubscribes work through any process (spec 7.1, 7.4,
7.9); one process is SIGKILLed mid-stream and the client resumes through another with
``Last-Event-ID``, with no gap and no duplicate, and the interrupted task is settled
``failed`` once its lease expires. Once with PostgreSQL ``LISTEN/NOTIFY`` as the bus,
once with Redis. Bounded: every wait has a deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from parley.server.tasks._recovery import RESTARTED
from parley.stores.sql import database_url
from tests.servers import parley_serve
from tests.stores.databases import _unavailable

ROOT = Path(__file__).resolve().parents[2]
PARLEY = str(Path(sys.executable).with_name("parley"))
LEASE_TTL = 2.0
REDIS = "redis://127.0.0.1:6379/0"


async def _admin(statement: str) -> None:
    url = database_url(os.environ.get("PARLEY_TEST_POSTGRES_URL", ""))
    engine = create_async_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            await connection.execute(text(statement))
    finally:
        await engine.dispose()


@contextmanager
def _database() -> Iterator[str]:
    """A PostgreSQL database of this test's own, dropped afterwards."""
    url = os.environ.get("PARLEY_TEST_POSTGRES_URL")
    if not url:
        _unavailable("set PARLEY_TEST_POSTGRES_URL to run the PostgreSQL tests")
    name = f"parley_processes_{uuid.uuid4().hex[:12]}"
    try:
        asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    except OSError as error:
        _unavailable(f"cannot reach PostgreSQL: {error}")
    try:
        yield database_url(str(url)).rsplit("/", 1)[0] + f"/{name}"
    finally:
        asyncio.run(_admin(f'DROP DATABASE "{name}" WITH (FORCE)'))


def _serve(database: str, log: Path, *options: str) -> Any:
    return parley_serve(["--db", database, *options], log)


def _message(said: str, **fields: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "kind": "message",
        "messageId": str(uuid.uuid4()),
        "parts": [{"kind": "text", "text": said}],
        **fields,
    }


def _rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _call(base: str, method: str, params: Any) -> Any:
    answer = httpx.post(f"{base}/", json=_rpc(method, params), timeout=30).json()
    assert "result" in answer, answer
    return answer["result"]


def _stream(
    base: str, body: dict[str, Any], headers: dict[str, str] | None = None, limit: int = 1000
) -> Iterator[tuple[int, dict[str, Any]]]:
    with (
        httpx.Client(timeout=httpx.Timeout(30, read=3 * LEASE_TTL + 10)) as client,
        connect_sse(client, "POST", f"{base}/", json=body, headers=headers or {}) as source,
    ):
        for count, sse in enumerate(source.iter_sse()):
            yield int(sse.id), json.loads(sse.data)["result"]
            if count + 1 >= limit:
                return


def _scenario(bases: list[str], processes: list[subprocess.Popen[bytes]]) -> None:
    one, two, three = bases
    # Multi-turn, each turn through another process, followed by a v1.0 subscriber on a
    # third: it sees every turn to the terminal state (v1.0.1 3.1.6).
    asked = _call(one, "message/send", {"message": _message("book a flight")})
    assert asked["status"]["state"] == "input-required"
    subscribe = _rpc("SubscribeToTask", {"id": asked["id"]})
    subscriber = _stream(three, subscribe, headers={"A2A-Version": "1.0"})
    first = next(subscriber)[1]
    assert first["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    answer = _message("from Oslo to Rome on 2026-12-01", taskId=asked["id"])
    consent = _call(two, "message/send", {"message": answer})
    assert consent["status"]["state"] == "input-required"
    booked = _call(one, "message/send", {"message": _message("yes", taskId=asked["id"])})
    assert booked["status"]["state"] == "completed"
    assert _call(one, "tasks/get", {"id": asked["id"]})["status"]["state"] == "completed"
    states = [
        event["statusUpdate"]["status"]["state"]
        for _, event in subscriber
        if "statusUpdate" in event
    ]
    assert states.count("TASK_STATE_INPUT_REQUIRED") == 1  # the consent, then on
    assert states[-1] == "TASK_STATE_COMPLETED"

    # A cancel through one process reaches the run on another; a v0.3 cancel of the
    # canceled task answers -32002 on any process.
    params = {"message": _message("count to 300"), "configuration": {"blocking": False}}
    counting = _call(one, "message/send", params)
    canceled = _call(two, "tasks/cancel", {"id": counting["id"]})
    assert canceled["status"]["state"] == "canceled"
    again = httpx.post(f"{three}/", json=_rpc("tasks/cancel", {"id": counting["id"]}), timeout=30)
    assert again.json()["error"]["code"] == -32002  # v0.3.0 8.2: canceled already
    assert _call(one, "tasks/get", {"id": counting["id"]})["status"]["state"] == "canceled"

    # A stream on one process, followed from another; its process is killed mid-stream,
    # and the client resumes through a third.
    started = _stream(one, _rpc("message/stream", {"message": _message("count to 60")}), limit=4)
    seen = list(started)
    task_id = seen[0][1]["id"]
    follower = _stream(three, _rpc("tasks/resubscribe", {"id": task_id}))
    followed = [next(follower)]
    followed.append(next(follower))  # a live event, from another process's run
    os.kill(processes[0].pid, signal.SIGKILL)
    processes[0].wait(10)
    resumed = list(
        _stream(
            two,
            _rpc("tasks/resubscribe", {"id": task_id}),
            headers={"Last-Event-ID": str(seen[-1][0])},
        )
    )
    sequences = [n for n, _ in seen + resumed]
    assert sequences == list(range(1, len(sequences) + 1)), "no gap, no duplicate"
    last = resumed[-1][1]
    assert (last["kind"], last["status"]["state"], last["final"]) == (
        "status-update",
        "failed",
        True,
    )
    assert last["status"]["message"]["parts"][0]["text"] == RESTARTED
    rest = list(follower)
    assert rest[-1][1]["status"]["state"] == "failed"
    assert [n for n, _ in followed + rest] == list(range(followed[0][0], rest[-1][0] + 1))
    assert _call(three, "tasks/get", {"id": task_id})["status"]["state"] == "failed"


@pytest.mark.postgres
@pytest.mark.parametrize("bus", [None, REDIS], ids=["listen-notify", "redis"])
def test_three_processes_on_one_postgresql(bus: str | None, tmp_path: Path) -> None:
    options = ["--lease-ttl", str(LEASE_TTL)] + (["--bus", bus] if bus else [])
    with _database() as database, ExitStack() as stack:
        served = [
            stack.enter_context(_serve(database, tmp_path / f"server-{n}.log", *options))
            for n in range(3)
        ]
        _scenario([base for _, base in served], [process for process, _ in served])


def test_a_second_process_on_one_sqlite_file_is_refused(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'one.db'}"
    with _serve(database, tmp_path / "first.log"):
        second = subprocess.run(
            [PARLEY, "serve", "--db", database, "--port", "0"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert second.returncode == 2
    said = " ".join(second.stderr.split())
    assert "another process (pid" in said
    assert "SQLite serves one process at a time" in said
