"""Instructions per request, counted in one process by callgrind: ``instructions.py``'s
figure in about a tenth of its time (30 s rather than 3-8 min on a loaded machine), for
comparing two trees side by side.

Sets the app up (imports, schemas, 200 warm-up requests) with callgrind's
instrumentation off, turns it on (``callgrind_control -i on``), and counts only what runs
inside one ``itertools.starmap`` step (``--toggle-collect=starmap_next``): ``--requests``
requests, ``--concurrency`` at a time, as ``profile_send.py`` sends them. The figure
includes the event loop's turns and is a few percent above ``instructions.py``'s; two
runs of one tree differ by about 500.

    python bench/instructions_in_process.py [--tree DIR] [--target demo] [--dialect 1.0]
        [--stream] [--requests 400] [--db sqlite]

``--db sqlite``: the store a fresh SQLite file (in a folder of its own). Only the event
loop's thread is counted: the checkpointer's thread, which copies the WAL into the
database, is not (``instructions_served.py --target sqlite`` counts it).

``--tree``: measure the ``src`` and ``bench`` of another checkout (a ``git archive`` copy
of main, say) with this interpreter.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def counted(options: argparse.Namespace) -> int:
    tree = Path(options.tree).resolve()
    command = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no",
        "--toggle-collect=starmap_next", "--callgrind-out-file=/dev/null",
        sys.executable, str(Path(__file__).resolve()), "--inside", *sys.argv[1:],
    ]  # fmt: skip
    environment = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, timeout=1800, env=environment
    )
    match = re.search(r"Collected : (\d+)", done.stderr)
    if match is None:
        raise RuntimeError(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(match.group(1))


def inside(options: argparse.Namespace) -> None:
    """The counted run (under callgrind)."""
    sys.path.insert(0, str(Path(options.tree).resolve()))
    from bench import profile_send

    loop = asyncio.new_event_loop()
    send = argparse.Namespace(dialect=options.dialect, stream=options.stream, apart=False)

    async def request(app: Any, number: int) -> None:
        await profile_send._request(app, profile_send._body(number, send), options.dialect)

    folder = tempfile.mkdtemp(prefix="parley-instructions-")
    db = f"sqlite:///{folder}/bench.db" if options.db == "sqlite" else "memory"

    async def set_up() -> Any:
        app, _ = profile_send._app(options.target, db)
        await app.handler.start()
        for number in range(200):
            await request(app, number)
        return app

    app = loop.run_until_complete(set_up())
    if hasattr(profile_send, "tune_gc"):  # as that tree's profile_send
        profile_send.tune_gc()
    else:  # a tree from before tune_gc's callback
        gc.collect()
        gc.freeze()
        young = getattr(profile_send, "YOUNG_THRESHOLD", 10_000)
        gc.set_threshold(young, getattr(profile_send, "MIDDLE_THRESHOLD", 10), 10)
    numbers = iter(range(1_000, 1_000 + options.requests))

    async def worker() -> None:
        for number in numbers:
            await request(app, number)

    async def all_workers() -> None:
        await asyncio.gather(*(worker() for _ in range(options.concurrency)))

    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True)
    list(itertools.starmap(loop.run_until_complete, [(all_workers(),)]))
    shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", default=str(ROOT))
    parser.add_argument("--target", choices=("echo", "demo"), default="echo")
    parser.add_argument("--dialect", choices=("0.3", "1.0"), default="0.3")
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--db", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.inside:
        inside(options)
        return
    per_request = counted(options) / options.requests
    del options.inside
    print(json.dumps({**vars(options), "instructions_per_request": round(per_request)}))


if __name__ == "__main__":
    main()
