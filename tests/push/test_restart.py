"""Notifications survive a SIGKILL of the agent (SQLite and PostgreSQL): the agent runs
as ``parley serve`` in a subprocess, finishes a task while its webhook is down (so every
notification is pending in the outbox), is killed with SIGKILL, and restarted on the same
database with the webhook up: every notification arrives, in order, once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from parley.client import AgentKeys, connect
from parley.stores.sql import database_url
from parley.types import PushNotificationConfig, Task, TaskState
from tests.push.push_agent import CHUNKS
from tests.push.webhook import webhook
from tests.servers import listening_socket, parley_serve

UPDATES = 1 + CHUNKS + 1  # the task (created working by @agent), the chunks, completed


def _serve(
    database: str, log: Path, key: Path
) -> AbstractContextManager[tuple[subprocess.Popen[bytes], str]]:
    arguments = ["tests.push.push_agent:agent", "--db", database]
    push = ["--allow-push-to", "127.0.0.1/32", "--signing-key", str(key)]
    return parley_serve([*arguments, *push], log)


def _key(directory: Path) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path = directory / "key.pem"
    path.write_bytes(pem)
    return path


@asynccontextmanager
async def _postgres_database() -> AsyncIterator[str]:
    """The URL of a fresh PostgreSQL database, dropped afterwards."""
    url = os.environ.get("PARLEY_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("PARLEY_REQUIRE_POSTGRES") == "1":
            pytest.fail("PostgreSQL is required here (PARLEY_REQUIRE_POSTGRES=1)")
        pytest.skip("no PostgreSQL: set PARLEY_TEST_POSTGRES_URL")
    name = f"parley_push_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(database_url(url), isolation_level="AUTOCOMMIT")
    async with admin.connect() as connection:
        await connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(database_url(url)).set(database=name).render_as_string(hide_password=False)
    finally:
        async with admin.connect() as connection:
            await connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        await admin.dispose()


@asynccontextmanager
async def _database(kind: str, tmp_path: Path) -> AsyncIterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'tasks.db'}"
    else:
        async with _postgres_database() as url:
            yield url


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_pending_notifications_are_delivered_once_after_sigkill(
    kind: str, tmp_path: Path
) -> None:
    log, key = tmp_path / "server.log", _key(tmp_path)
    async with _database(kind, tmp_path) as database:  # may skip: no socket open yet
        down = listening_socket()  # the webhook's port, refusing connections until it serves
        hook_url = f"http://127.0.0.1:{down.getsockname()[1]}/hook"
        with _serve(database, log, key) as (first, base):
            async with await connect(base) as client:
                task = await client.send_message(
                    "go", push_notification_config=PushNotificationConfig(url=hook_url)
                )
            assert isinstance(task, Task)
            assert task.status.state is TaskState.completed  # every notification is pending
            await asyncio.sleep(0.5)  # a few attempts fail against the closed port
            first.send_signal(signal.SIGKILL)
            first.wait(10)
        with (
            _serve(database, log, key) as (_, again),  # the same key, on a port of its own
            webhook(AgentKeys.of_agent(again), down) as (hook, _),
        ):
            await hook.wait_for(UPDATES)
            await asyncio.sleep(1.0)  # time for a duplicate to show, if there were one
    states = [t.status.state for t in hook.tasks]
    assert states == [*[TaskState.working] * (1 + CHUNKS), TaskState.completed]
    chunks = [sum(len(a.parts) for a in t.artifacts or ()) for t in hook.tasks]
    assert chunks == [0, *range(1, CHUNKS + 1), CHUNKS]
    assert hook.tasks[-1].id == task.id
