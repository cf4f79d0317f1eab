"""Instructions per request of a whole served process: uvicorn, uvloop, httptools and the
ASGI app together, counted by callgrind in the server process, driven over real sockets.

Starts the target as ``bench/targets.py`` does (``parley serve ... --db memory``, or
``python -m uvicorn bench.raw_app:app``) under ``valgrind --tool=callgrind
--instr-atstart=no``, warms it up, turns counting on (``callgrind_control -i on``), sends
``--requests`` JSON-RPC sends (``bench/lua/a2a.lua``'s body) over ``--connections``
keep-alive connections from this process (the client's cost is not counted: it is
another process), dumps, sends twice as many, dumps again. Instructions per request is
the difference of the two dumps over ``--requests``, which cancels what a dump and the
turning on cost. ``--annotate`` keeps the second dump for ``callgrind_annotate``.

``--target sqlite`` / ``demo-sqlite`` serve the echo / the demo on a fresh SQLite file in
a folder of their own (``parley serve --db sqlite:///...``), or on a copy of ``--db-file
FILE`` (a store made beforehand: a million tasks, say); ``--tree DIR`` serves another
checkout (a ``git archive`` copy: its ``src`` first on the path) with this one's
interpreter.

``--target null`` serves an app that only reads the body and answers a constant (29
bytes): what uvicorn, uvloop and httptools cost a request, next to nothing of an app's.

``--strace`` instead attaches ``strace -c -f`` to the (uncounted) server after the
warm-up for ``--requests`` requests: syscalls per request (``epoll_wait`` per request is
the event loop's turns per request).

``--in-process raw`` counts the raw bound's ASGI app alone in one process, as
``instructions_in_process.py`` counts parley's; ``--in-process null`` counts that harness
around an app that only reads the body and sends a constant answer. The app's own cost is
the first less the second, and uvicorn's (with the loop's) the served raw count less it.

    python bench/instructions_served.py [--target raw|null|parley|parley-v1|demo|sqlite|
        demo-sqlite] [--requests 1000] [--connections 16] [--strace] [--annotate FILE]
        [--tree DIR] [--db-file FILE]
    python bench/instructions_served.py --in-process raw|null [--requests 400]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import targets  # noqa: E402

_BODY = {
    "0.3": (
        '{"jsonrpc":"2.0","id":"t%d","method":"message/send","params":{"message":'
        '{"kind":"message","messageId":"m-t%d","role":"user",'
        '"parts":[{"kind":"text","text":"hello, bench"}]}}}'
    ),
    "1.0": (
        '{"jsonrpc":"2.0","id":"t%d","method":"SendMessage","params":{"message":'
        '{"messageId":"m-t%d","role":"ROLE_USER","parts":[{"text":"hello, bench"}]}}}'
    ),
}
_COMPLETED = {"0.3": b'"completed"', "1.0": b'"TASK_STATE_COMPLETED"'}


class Client:
    """``connections`` keep-alive connections, each sending one request at a time, as wrk."""

    def __init__(self, port: int, dialect: str, connections: int) -> None:
        self.port, self.dialect, self.connections = port, dialect, connections
        self.streams: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.number = 0
        self.response_bytes = 0

    async def open(self) -> None:
        for _ in range(self.connections):
            self.streams.append(await asyncio.open_connection("127.0.0.1", self.port))

    def _request(self) -> bytes:
        self.number += 1
        body = (_BODY[self.dialect] % (self.number, self.number)).encode()
        version = b"A2A-Version: 1.0\r\n" if self.dialect == "1.0" else b""
        return (
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            b"%sContent-Length: %d\r\n\r\n%s" % (self.port, version, len(body), body)
        )

    async def _one(self, index: int) -> None:
        reader, writer = self.streams[index]
        request = self._request()
        writer.write(request)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            if error.partial:
                raise
            # uvicorn closes a connection idle for 5 s (a slow dump under callgrind)
            # before it reads the request: the send was never made; again, reconnected
            writer.close()
            self.streams[index] = await asyncio.open_connection("127.0.0.1", self.port)
            reader, writer = self.streams[index]
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
        match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        if not head.startswith(b"HTTP/1.1 200") or match is None:
            raise RuntimeError(f"unexpected response: {head!r}")
        body = await reader.readexactly(int(match.group(1)))
        if _COMPLETED[self.dialect] not in body:
            raise RuntimeError(f"the request did not complete: {body[:300]!r}")
        self.response_bytes = len(head) + len(body)

    async def send(self, count: int) -> None:
        """Exactly ``count`` requests over all connections."""
        left = iter(range(count))

        async def worker(index: int) -> None:
            for _ in left:  # a server that stops answering fails the run, never hangs it
                await asyncio.wait_for(self._one(index), 300)

        await asyncio.gather(*(worker(index) for index in range(len(self.streams))))

    async def close(self) -> None:
        for _, writer in self.streams:
            writer.close()


def _target(key: str) -> targets.Target:
    if key == "null":  # uvicorn's own cost: an app that does next to nothing
        return targets.Target("null", "null app", "raw", "bench.instructions_served:_null_app")
    return targets.TARGETS[key]


def _start(
    target: targets.Target,
    wrapper: list[str],
    folder: Path,
    tree: Path = ROOT,
    db_file: Path | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """Serve ``target`` from ``tree``; a SQLite target's file goes in ``folder``, a copy
    of ``db_file`` when given."""
    if db_file is not None and target.db == "sqlite":
        shutil.copy(db_file, folder / "parley.db")
    port = targets.free_port()
    db = f"sqlite:///{folder / 'parley.db'}" if target.db == "sqlite" else target.db or None
    command, cwd = targets._command(target, port, db)
    path = [str(tree / "src"), str(tree)] if tree != ROOT else [str(ROOT)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    env.pop("VIRTUAL_ENV", None)
    process = subprocess.Popen([*wrapper, *command], cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    targets.wait_ready(process, f"http://127.0.0.1:{port}/", target.dialect, timeout=600)
    return process, port


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _control(pid: int, *flags: str) -> None:
    subprocess.run(
        ["callgrind_control", *flags, str(pid)], capture_output=True, check=True, timeout=300
    )


def _total(path: Path) -> int:
    text = path.read_text(errors="replace")
    match = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no total in {path}")
    return int(match.group(1))


def served(options: argparse.Namespace) -> dict[str, Any]:
    target = _target(options.target)
    folder = Path(tempfile.mkdtemp(prefix="served-"))
    out = folder / "callgrind.out"
    wrapper = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
               f"--callgrind-out-file={out}.%p"]  # fmt: skip
    process, port = _start(target, wrapper, folder, options.tree.resolve(), options.db_file)
    loop = asyncio.new_event_loop()
    client = Client(port, target.dialect, options.connections)
    try:
        loop.run_until_complete(client.open())
        loop.run_until_complete(client.send(options.warm))
        _control(process.pid, "-i", "on")
        counts = []
        for count in (options.requests, 2 * options.requests):
            loop.run_until_complete(client.send(count))
            dumps = set(folder.glob("callgrind.out.*"))
            _control(process.pid, "-d")
            counts.append(_new_dump(folder, dumps))
        _control(process.pid, "-i", "off")
        loop.run_until_complete(client.close())
    finally:
        _stop(process)
        loop.close()
    first, second = (_total(path) for path in counts)
    if options.annotate:
        shutil.copy(counts[1], options.annotate)
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "instructions_per_request": round((second - first) / options.requests),
        "dumps": [first, second],
        "response_bytes": client.response_bytes,
    }


def _new_dump(folder: Path, before: set[Path]) -> Path:
    for _ in range(600):
        new = set(folder.glob("callgrind.out.*")) - before
        if new:
            time.sleep(0.5)  # the dump is written by the time callgrind_control returns
            return new.pop()
        time.sleep(0.1)
    raise RuntimeError("callgrind wrote no dump")


def syscalls(options: argparse.Namespace) -> dict[str, Any]:
    target = _target(options.target)
    folder = Path(tempfile.mkdtemp(prefix="served-strace-"))
    process, port = _start(target, [], folder, options.tree.resolve(), options.db_file)
    loop = asyncio.new_event_loop()
    client = Client(port, target.dialect, options.connections)
    report = folder / "strace.txt"
    try:
        loop.run_until_complete(client.open())
        loop.run_until_complete(client.send(options.warm))
        tracer = subprocess.Popen(
            ["strace", "-c", "-f", "-o", str(report), "-p", str(process.pid)],
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1)  # attached
        loop.run_until_complete(client.send(options.requests))
        tracer.send_signal(2)
        tracer.wait(30)
        loop.run_until_complete(client.close())
    finally:
        _stop(process)
        loop.close()
    calls: dict[str, float] = {}
    for line in report.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[-1].isidentifier() and fields[3].isdigit():
            calls[fields[-1]] = round(int(fields[3]) / options.requests, 2)
    shutil.rmtree(folder, ignore_errors=True)
    return {"syscalls_per_request": calls}


def in_process_raw(options: argparse.Namespace) -> dict[str, Any]:
    """The raw bound's app alone, counted as instructions_in_process.py counts parley's."""
    if not options.inside:
        command = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no",
            "--toggle-collect=starmap_next", "--callgrind-out-file=/dev/null",
            sys.executable, str(Path(__file__).resolve()), "--inside", *sys.argv[1:],
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=1800)
        match = re.search(r"Collected : (\d+)", done.stderr)
        if match is None:
            raise RuntimeError(f"callgrind printed no count:\n{done.stderr[-2000:]}")
        return {"instructions_per_request": round(int(match.group(1)) / options.requests)}
    from bench import profile_send, raw_app

    loop = asyncio.new_event_loop()
    send = argparse.Namespace(dialect="0.3", stream=False, apart=False)
    app = raw_app.app if options.in_process == "raw" else _null_app

    async def request(number: int) -> None:
        await profile_send._request(app, profile_send._body(number, send))

    async def warm() -> None:
        for number in range(200):
            await request(number)

    loop.run_until_complete(warm())
    numbers = iter(range(1_000, 1_000 + options.requests))

    async def worker() -> None:
        for number in numbers:
            await request(number)

    async def all_workers() -> None:
        await asyncio.gather(*(worker() for _ in range(options.connections)))

    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True)
    list(itertools.starmap(loop.run_until_complete, [(all_workers(),)]))
    return {}


_NULL_HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"29")]


async def _null_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Reads the request and answers a constant: the in-process harness's own cost."""
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": _NULL_HEADERS})
    await send({"type": "http.response.body", "body": b'{"result":{"s":"completed"}}\n'})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--target", choices=("raw", "null", "parley", "parley-v1", "demo", "sqlite", "demo-sqlite")
    )
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--warm", type=int, default=400)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--strace", action="store_true")
    parser.add_argument("--in-process", choices=("raw", "null"))
    parser.add_argument("--annotate", default="")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument(
        "--db-file", type=Path, help="a SQLite target serves a copy of this store, not a fresh one"
    )
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    options.target = options.target or "parley"
    if options.in_process:
        result = in_process_raw(options)
        if options.inside:
            return
    else:
        result = syscalls(options) if options.strace else served(options)
    del options.inside
    options.tree = str(options.tree)
    options.db_file = options.db_file and str(options.db_file)
    print(json.dumps({**vars(options), **result}))


if __name__ == "__main__":
    main()
