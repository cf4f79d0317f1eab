"""What the benchmark serves: each target as a process pinned to CPU 0, and its store.

Every target is served by uvicorn, one worker, with its default loop and HTTP parser as
installed (uvloop and httptools): the raw bound and the SDKs through ``python -m
uvicorn``, parley through ``parley serve`` exactly as a user starts it (which runs
uvicorn the same way). Stores: memory, the default SQLite file (``parley serve``
without ``--db``, in a fresh folder), and a fresh PostgreSQL database made for the run
and dropped after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
VENV = Path(sys.prefix) if sys.prefix != sys.base_prefix else ROOT / ".venv"
"""The venv this runs in (``scripts/bench --python 3.13`` runs it in ``.venvs/3.13``):
parley's targets and the raw bound are served by its interpreter, so both sides of a
ratio run on the same CPython."""
PARLEY_PYTHON = VENV / "bin" / "python"
PARLEY = VENV / "bin" / "parley"
SERVER_CPU, LOAD_CPU = "0", "1"
DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"


@dataclass(frozen=True)
class Target:
    key: str
    name: str
    kind: str
    """raw, parley, sdk03 or sdk13: how it is started."""
    app: str = ""
    """uvicorn's module:attribute, or the agent of ``parley serve`` ("" for the demo)."""
    db: str = ""
    """parley's store: memory, sqlite (the default file) or postgres."""
    dialect: str = "0.3"
    streams: bool = True
    """Whether it streams 10 chunks for ``stream`` (the demo agent does not)."""
    env: dict[str, str] = field(default_factory=dict)
    processes: int = 1
    """Server processes, all on the server CPU, each loaded by a wrk of its own
    (``multi``: two ``parley serve`` on the one database; ``raw-multi``: two raw bounds,
    what two processes sharing one CPU cost with nothing of parley's)."""


TARGETS = {
    target.key: target
    for target in (
        Target("raw", "raw ASGI bound", "raw", "bench.raw_app:app"),
        Target("raw-multi", "raw ASGI bound, 2 processes", "raw", "bench.raw_app:app", processes=2),
        Target("parley", "parley echo, memory", "parley", "bench.parley_echo:echo", "memory"),
        Target(
            "parley-v1",
            "parley echo, memory (v1.0)",
            "parley",
            "bench.parley_echo:echo",
            "memory",
            dialect="1.0",
        ),
        Target(
            "parley-otel",
            "parley echo, memory, tracing on",
            "parley",
            "bench.parley_echo_otel:echo",
            "memory",
        ),
        Target("demo", "parley demo, memory", "parley", "", "memory", streams=False),
        Target("sqlite", "parley echo, SQLite", "parley", "bench.parley_echo:echo", "sqlite"),
        Target("demo-sqlite", "parley demo, SQLite", "parley", "", "sqlite", streams=False),
        Target(
            "postgres", "parley echo, PostgreSQL", "parley", "bench.parley_echo:echo", "postgres"
        ),
        Target(
            "multi",
            "parley echo, PG, 2 processes",
            "parley",
            "bench.parley_echo:echo",
            "postgres",
            processes=2,
        ),
        Target("sdk", "a2a-sdk 0.3.26", "sdk03", "sdk_echo:app"),
        Target(
            "sdk-no-otel",
            "a2a-sdk 0.3.26, tracing off",
            "sdk03",
            "sdk_echo:app",
            env={"OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "false"},
        ),
        Target("sdk13", "a2a-sdk 1.3 (v1.0)", "sdk13", "sdk13_echo:app", dialect="1.0"),
    )
}
"""Every target ``--targets`` can name, in the order of the table."""

PENDING: dict[str, str] = {}
"""Targets the benchmark names but cannot run yet, with the reason."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Served:
    url: str
    pid: int
    target: Target
    database: str | None = None
    """The database URL of a SQL store, for the million-task mode."""
    more: list[tuple[str, int]] = field(default_factory=list)
    """(url, pid) of the other processes of a several-process target."""

    @property
    def all(self) -> list[tuple[str, int]]:
        return [(self.url, self.pid), *self.more]


@contextlib.contextmanager
def serving(
    target: Target, postgres: str = DEFAULT_POSTGRES, db_url: str | None = None
) -> Iterator[Served]:
    """Serve ``target`` on free ports (one per process), pinned to the server CPU, until
    the block ends."""
    with _store(target, postgres, db_url) as (folder, database):
        db = database if db_url or target.db != "sqlite" else None
        env = {**os.environ, **target.env}
        started: list[tuple[str, subprocess.Popen[bytes]]] = []
        try:
            for _ in range(target.processes):
                port = free_port()
                command, cwd = _command(target, port, db)
                env["PYTHONPATH"] = str(cwd if target.kind != "parley" else ROOT)
                process = subprocess.Popen(
                    ["taskset", "-c", SERVER_CPU, *command],
                    cwd=folder or cwd,
                    env=env,
                    stdout=subprocess.DEVNULL,
                )
                started.append((f"http://127.0.0.1:{port}/", process))
                wait_ready(process, started[-1][0], target.dialect)
            (url, first), rest = started[0], started[1:]
            yield Served(url, first.pid, target, database, [(u, p.pid) for u, p in rest])
        finally:
            for _, process in started:
                process.terminate()
            for _, process in started:
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _command(target: Target, port: int, db: str | None) -> tuple[list[str], Path]:
    """The command line and its folder; ``db`` is the ``--db`` of ``parley serve``
    (``None``: its default, SQLite in the folder it runs in)."""
    if target.kind == "parley":
        command = [str(PARLEY), "serve", *([target.app] if target.app else [])]
        if db is not None:
            command += ["--db", db]
        return [*command, "--port", str(port), "--log-level", "warning"], ROOT
    if target.kind == "raw":
        python, cwd = PARLEY_PYTHON, ROOT
    else:
        from bench.venvs import sdk03_python, sdk13_python

        python, cwd = (sdk03_python() if target.kind == "sdk03" else sdk13_python()), BENCH
    uvicorn = [str(python), "-m", "uvicorn", target.app, "--host", "127.0.0.1"]
    return [*uvicorn, "--port", str(port), "--workers", "1", "--log-level", "warning",
            "--no-access-log"], cwd  # fmt: skip


@contextlib.contextmanager
def _store(
    target: Target, postgres: str, db_url: str | None
) -> Iterator[tuple[str | None, str | None]]:
    """(folder to run in, database URL) of the target's store, removed afterwards."""
    if target.db == "memory":
        yield None, "memory"
    elif target.db == "sqlite":
        with tempfile.TemporaryDirectory(prefix="parley-bench-") as folder:
            # ``parley serve`` without --db: sqlite:///parley.db in its working folder.
            yield folder, db_url or f"sqlite:///{folder}/parley.db"
    elif target.db == "postgres":
        if db_url is not None:
            yield None, db_url
            return
        with fresh_database(postgres) as url:
            yield None, url
    else:
        yield None, None


_DATABASES = itertools.count()


@contextlib.contextmanager
def fresh_database(postgres: str) -> Iterator[str]:
    """A new PostgreSQL database beside the one ``postgres`` names, dropped afterwards."""
    name = f"parley_bench_{os.getpid()}_{int(time.time())}_{next(_DATABASES)}"
    admin = postgres.replace("postgresql+asyncpg://", "postgresql://")

    async def run(statement: str) -> None:
        connection = await _admin(admin)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    try:
        yield admin.rsplit("/", 1)[0] + "/" + name
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


_READY_03 = (
    b'{"jsonrpc":"2.0","id":0,"method":"message/send","params":{"message":{"kind":"message",'
    b'"messageId":"ready-%d","role":"user","parts":[{"kind":"text","text":"ready?"}]}}}'
)
_READY_10 = (
    b'{"jsonrpc":"2.0","id":0,"method":"SendMessage","params":{"message":{'
    b'"messageId":"ready-%d","role":"ROLE_USER","parts":[{"text":"ready?"}]}}}'
)


def wait_ready(
    process: subprocess.Popen[bytes], url: str, dialect: str, timeout: float = 60
) -> None:
    """Wait until the target completes a ``message/send``; raises if it exits or never does."""
    body = _READY_10 if dialect == "1.0" else _READY_03
    headers = {"content-type": "application/json", "a2a-version": dialect}
    completed = b'"TASK_STATE_COMPLETED"' if dialect == "1.0" else b'"completed"'
    deadline = time.monotonic() + timeout
    attempt = 0
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server for {url} exited with {process.returncode}")
        attempt += 1
        with contextlib.suppress(httpx.HTTPError):
            answer = httpx.post(url, content=body % attempt, headers=headers, timeout=10)
            if completed in answer.content:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not complete a message/send in {timeout:.0f} s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class WalState:
    """What a PostgreSQL server's write-ahead log looked like at one moment
    (``wal_state``)."""

    segments: frozenset[str]
    """The segment files in ``pg_wal``."""
    lsn: str
    checkpoints: int
    """Checkpoints begun since the statistics were reset (timed and requested)."""

    def since(self, before: WalState) -> dict[str, Any]:
        """The log's growth from ``before``: segment files PostgreSQL *created* (each a
        16 MB file written with zeros and synced while every commit waits; a recycled one
        is only renamed, and a checkpoint in between recycles old ones under new names
        too, so ``checkpoints`` says whether the count is clean), and the bytes of log
        written by the whole server."""
        return {
            "wal_segments_new": len(self.segments - before.segments),
            "wal_bytes": _lsn(self.lsn) - _lsn(before.lsn),
            "checkpoints": self.checkpoints - before.checkpoints,
        }


def wal_state(postgres: str) -> WalState:
    """The write-ahead log of the server ``postgres`` names (a superuser's or
    ``pg_monitor``'s URL: it lists ``pg_wal``)."""

    async def read() -> WalState:
        connection = await _admin(postgres)
        try:
            names = await connection.fetch(
                "SELECT name FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'"
            )
            lsn = await connection.fetchval("SELECT pg_current_wal_lsn()::text")
            checkpoints = await connection.fetchval(
                "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
            )
        finally:
            await connection.close()
        return WalState(frozenset(row[0] for row in names), lsn, int(checkpoints))

    return asyncio.run(read())


def _lsn(text: str) -> int:
    """A log position (``16/B374D848``) as a byte offset."""
    high, low = text.split("/")
    return (int(high, 16) << 32) + int(low, 16)


async def _admin(postgres: str) -> Any:
    import asyncpg  # parley's postgresql extra

    return await asyncpg.connect(postgres.replace("postgresql+asyncpg://", "postgresql://"))
