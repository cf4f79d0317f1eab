"""The server's own cost per request, measured in process: no sockets, no HTTP parser.

Drives a target's ASGI app directly with ``message/send`` (or ``message/stream``; with
``--dialect 1.0``, v1.0's ``SendMessage`` or ``SendStreamingMessage``) requests,
``--concurrency`` at a time on one event loop, and prints the CPU time per request.
Wall-clock figures on a busy machine mean little; what this measures is stable enough to
compare a change against the one before it:

- ``--profile``: cProfile of the loop, the top functions by own time;
- ``--round-trips`` (PostgreSQL): asyncpg calls that wait for the server, and new
  connections, per request;
- ``--pg-cpu`` (PostgreSQL on this machine): the user and system CPU time of the
  database's PostgreSQL backends per request (the other side of each round trip);
- under ``valgrind --tool=callgrind`` (see ``--help`` of ``scripts/bench``'s ``--profile``
  notes in bench/README.md), instruction counts, which do not move with machine load.

    python bench/profile_send.py [--target echo|demo] [--db memory|sqlite|postgresql://...]
        [--requests 5000] [--concurrency 16] [--stream] [--dialect 0.3|1.0] [--profile]
        [--processes 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import os
import pstats
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from parley.server._gc import tune_gc  # noqa: E402


def _body(number: int, options: argparse.Namespace) -> bytes:
    body = _BODIES[options.dialect, options.stream] % (number, number)
    return body.replace(b'"stream"', b'"stream apart"') if options.apart else body


_SEND = (
    b'{"jsonrpc":"2.0","id":%d,"method":"message/send","params":{"message":{"kind":"message",'
    b'"messageId":"m-%d","role":"user","parts":[{"kind":"text","text":"hello, bench"}]}}}'
)
_SEND_V1 = (
    b'{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{'
    b'"messageId":"m-%d","role":"ROLE_USER","parts":[{"text":"hello, bench"}]}}}'
)
_BODIES = {
    ("0.3", False): _SEND,
    ("0.3", True): _SEND.replace(b"message/send", b"message/stream").replace(
        b"hello, bench", b"stream"
    ),
    ("1.0", False): _SEND_V1,
    ("1.0", True): _SEND_V1.replace(b"SendMessage", b"SendStreamingMessage").replace(
        b"hello, bench", b"stream"
    ),
}
_COMPLETED = {"0.3": b'"completed"', "1.0": b'"TASK_STATE_COMPLETED"'}


_SCOPE: dict[str, Any] = {
    "type": "http",
    "asgi": {"version": "3.0"},
    "http_version": "1.1",
    "method": "POST",
    "scheme": "http",
    "path": "/",
    "raw_path": b"/",
    "root_path": "",
    "query_string": b"",
    "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")],
    "client": ("127.0.0.1", 50000),
    "server": ("127.0.0.1", 8000),
}


async def _request(app: Any, body: bytes, dialect: str = "0.3") -> bytes:
    received = False
    done = asyncio.Event()
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                done.set()

    scope = dict(_SCOPE)
    if dialect != "0.3":
        scope["headers"] = [*_SCOPE["headers"], (b"a2a-version", dialect.encode())]
    await app(scope, receive, send)
    answer = b"".join(chunks)
    if _COMPLETED[dialect] not in answer:
        raise RuntimeError(f"the request did not complete: {answer[:300]!r}")
    return answer


def _app(target: str, db: str) -> Any:
    from parley.stores import open_store

    store = open_store(db)
    if target == "demo":
        from parley.demo import create_demo_app

        return create_demo_app(task_store=store), store
    from bench.parley_echo import card, echo
    from parley.server import create_app

    return create_app(echo, card, task_store=store), store


@contextlib.asynccontextmanager
async def _serving(options: argparse.Namespace) -> AsyncIterator[list[Any]]:
    """The apps, ``--processes`` of them on the one store, started; closed after."""
    served = [_app(options.target, options.db) for _ in range(options.processes)]
    for app, _ in served:
        await app.handler.start()
    try:
        yield [app for app, _ in served]
    finally:
        for app, store in served:
            await app.handler.aclose()
            close = getattr(store, "aclose", None)
            if close is not None:
                await close()


async def _run(options: argparse.Namespace) -> dict[str, Any]:
    async with _serving(options) as apps:
        for number in range(200):  # warm-up: imports, caches, first-use schema work
            for app in apps:
                await _request(app, _body(number, options), options.dialect)
        if not tune_gc():  # as the server's lifespan does (collect, freeze, thresholds)
            raise RuntimeError("the collector was tuned before the warm-up")
        profiler = cProfile.Profile() if options.profile else None
        numbers = iter(range(1_000, 1_000 + options.requests))

        async def worker(app: Any) -> None:
            for number in numbers:
                await _request(app, _body(number, options), options.dialect)

        counted = _count_round_trips() if options.round_trips else None
        backends = await _backend_cpu(options.db) if options.pg_cpu else {}
        cpu, wall = time.process_time(), time.perf_counter()
        if profiler is not None:
            profiler.enable()
        await asyncio.gather(*(worker(apps[n % len(apps)]) for n in range(options.concurrency)))
        if profiler is not None:
            profiler.disable()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        counts = dict(counted) if counted is not None else {}
        if options.pg_cpu:
            after = await _backend_cpu(options.db)
            for n, name in enumerate(("pg_user_us", "pg_system_us")):
                spent = sum(used[n] - backends.get(pid, (0, 0))[n] for pid, used in after.items())
                counts[name] = round(spent * 1e6)
    if profiler is not None:
        if options.dump:
            profiler.dump_stats(options.dump)
        stats = pstats.Stats(profiler, stream=sys.stderr)
        stats.sort_stats(options.sort).print_stats(options.top)
    return {
        "target": options.target,
        "db": options.db.split("@")[-1],
        "stream": options.stream,
        "apart": options.apart,
        "dialect": options.dialect,
        "requests": options.requests,
        "concurrency": options.concurrency,
        "processes": options.processes,
        "cpu_us_per_request": round(cpu / options.requests * 1e6, 1),
        "wall_us_per_request": round(wall / options.requests * 1e6, 1),
        **{f"{name}_per_request": round(n / options.requests, 2) for name, n in counts.items()},
    }


async def _backend_cpu(db: str) -> dict[int, tuple[float, float]]:
    """CPU seconds (user, system) each PostgreSQL backend of the database ``db`` has
    used so far (PostgreSQL on this machine), but this query's own. PostgreSQL's shared
    processes (WAL writer, checkpointer) are left out."""
    import asyncpg

    url = db.replace("postgresql+asyncpg://", "postgresql://")
    connection = await asyncpg.connect(url)
    try:
        rows = await connection.fetch(
            "SELECT pid FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    finally:
        await connection.close()
    return _cpu_of([row[0] for row in rows])


def _cpu_of(pids: list[int]) -> dict[int, tuple[float, float]]:
    """User and system CPU seconds of each process still there, from ``/proc``."""
    used = {}
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        used[pid] = (int(fields[11]) / tick, int(fields[12]) / tick)
    return used


def _count_round_trips() -> dict[str, int]:
    """Count, from now on, the asyncpg calls that wait for the server (``round_trips``:
    a statement, a prepare, BEGIN/COMMIT, a ping) and the connections opened."""
    import asyncpg
    from asyncpg.connection import Connection
    from asyncpg.prepared_stmt import PreparedStatement

    counts = {"round_trips": 0, "connects": 0}

    def counting(function: Any, name: str) -> Any:  # none of these calls another
        async def counted(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return await function(*args, **kwargs)

        return counted

    calls = ("execute", "executemany", "fetch", "fetchrow", "fetchval", "fetchmany", "prepare")
    for owner in (Connection, PreparedStatement):
        for method in calls:
            if hasattr(owner, method):
                setattr(owner, method, counting(getattr(owner, method), "round_trips"))
    asyncpg.connect = counting(asyncpg.connect, "connects")  # type: ignore[assignment]
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=("echo", "demo"), default="echo")
    parser.add_argument(
        "--db", default="memory", help="memory, sqlite, postgres (a fresh database) or a URL"
    )
    parser.add_argument("--requests", type=int, default=5_000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="servers on the one store (each its own app and store, as two processes "
        "sharing a database), the concurrent callers spread over them",
    )
    parser.add_argument(
        "--apart", action="store_true", help="with --stream: each chunk published on its own"
    )
    parser.add_argument(
        "--dialect", choices=("0.3", "1.0"), default="0.3", help="message/send or SendMessage"
    )
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--round-trips", action="store_true", help="count asyncpg's calls")
    parser.add_argument(
        "--pg-cpu", action="store_true", help="CPU of the database's PostgreSQL backends"
    )
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--dump", help="write the cProfile stats to this file")
    parser.add_argument("--sort", default="tottime", help="pstats order: tottime, cumulative")
    options = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if options.db == "sqlite":
            folder = stack.enter_context(tempfile.TemporaryDirectory())
            options.db = f"sqlite:///{os.path.join(folder, 'bench.db')}"
        elif options.db == "postgres":
            from bench.targets import DEFAULT_POSTGRES, fresh_database

            options.db = stack.enter_context(fresh_database(DEFAULT_POSTGRES))
        try:
            import uvloop

            runner: Any = uvloop.run
        except ImportError:
            runner = asyncio.run
        print(json.dumps(runner(_run(options))))


if __name__ == "__main__":
    main()
