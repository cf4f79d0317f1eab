"""A finished task's live objects are freed by reference counting, not left in cycles.

With hundreds of streams in flight, objects only the cyclic collector can free pile up
into its older generations, whose collections then stall every request (the tail
latency of a server with hundreds of streams). A run's ``LiveTask`` holds the whole event log, so it
and its log must not be part of a cycle once the run is over. Runs in a fresh
interpreter: the check disables the collector and watches everything it would free.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx

from parley.server import create_app
from tests.server.agents import ScriptedAgent, card
from tests.server.rpc import body, user_message

ROOT = Path(__file__).resolve().parents[2]
"""The repository: the script imports the test agents from ``tests``, wherever pytest
was started."""

SCRIPT = """
import asyncio, gc, json
import httpx
from parley.server import create_app
from tests.server.agents import ScriptedAgent, card
from tests.server.rpc import body, user_message

KINDS = {"LiveTask", "Turn", "EventLog", "LogReader", "_Client"}

async def main():
    app = create_app(ScriptedAgent(), card(), tune_gc=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
        async def both():
            params = {"message": user_message("chunks 3")}
            await client.post("/", json=body("message/send", params))
            params = {"message": user_message("chunks 3")}
            async with client.stream("POST", "/", json=body("message/stream", params)) as answer:
                async for _ in answer.aiter_bytes():
                    pass
        await both()  # warm-up: caches, first-use state
        await asyncio.sleep(0.01)
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        for _ in range(3):
            await both()
        await asyncio.sleep(0.01)
        gc.collect()
        found = sorted({type(o).__name__ for o in gc.garbage} & KINDS)
        gc.set_debug(0)
        print(json.dumps(found))

gc.disable()
asyncio.run(main())
"""


def test_a_finished_run_leaves_no_cycle_holding_its_task() -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=ROOT,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


async def test_a_finished_run_is_let_go_by_the_time_its_send_is_answered() -> None:
    """The registry keeps a run's asyncio task while it runs (the loop holds only a weak
    reference) and lets go of it in the run's last step, not in a done callback one
    loop turn later: a blocking send's answer finds none of its runs kept."""
    app = create_app(ScriptedAgent(), card(), tune_gc=False)
    runs = app.handler.runs
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
        for text in ("chunks 3", "hello"):
            params = {"message": user_message(text)}
            answer = await client.post("/", json=body("message/send", params))
            assert answer.json()["result"]["status"]["state"] == "completed"
            assert runs._background == set()
