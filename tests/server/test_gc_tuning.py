"""The app's lifespan tunes the garbage collector once per process (``tune_gc``).

Each case runs in a fresh interpreter: the tuning is process-wide and happens once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

SCRIPT = """
import asyncio, gc, json, sys
import httpx
from parley.server import create_app
from tests.server.agents import card, story

async def main(tune, preset):
    if preset:
        gc.set_threshold(*preset)
    before = gc.get_threshold()
    frozen_before = gc.get_freeze_count()
    app = create_app(story, card(), tune_gc=tune)
    async with app.router.router.lifespan_context(app.router):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
            card_status = (await client.get("/.well-known/agent-card.json")).status_code
        print(json.dumps({
            "before": before,
            "threshold": gc.get_threshold(),
            "frozen": gc.get_freeze_count() - frozen_before,  # 3.12 starts with some frozen
            "card": card_status,
        }))

asyncio.run(main(json.loads(sys.argv[1]), json.loads(sys.argv[2])))
"""


def run_fresh(script: str, *args: str, timeout: float = 60) -> Any:
    """Run ``script`` in a fresh interpreter; the JSON of its last line of output."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def serve_once(tune: bool, preset: tuple[int, int, int] | None = None) -> dict[str, object]:
    result: dict[str, object] = run_fresh(SCRIPT, json.dumps(tune), json.dumps(preset))
    assert result["card"] == 200
    return result


@pytest.mark.parametrize(
    ("tune", "preset", "threshold", "frozen"),
    [
        pytest.param(True, None, [40_000, 100, 10], True, id="tuned-by-default"),
        # None: the interpreter's own thresholds ((700, 10, 10) on 3.11 and 3.12, (2000, 10, 10)
        # on 3.13), read in the fresh interpreter before the app started.
        pytest.param(False, None, None, False, id="tune_gc-false-leaves-it"),
        pytest.param(True, (2000, 5, 5), [2000, 5, 5], False, id="own-settings-respected"),
    ],
)
def test_lifespan_tunes_the_collector_once(
    tune: bool, preset: tuple[int, int, int] | None, threshold: list[int] | None, frozen: bool
) -> None:
    result = serve_once(tune, preset)
    assert result["threshold"] == (result["before"] if threshold is None else threshold)
    assert bool(result["frozen"]) is frozen


AS_NEWER_PYTHONS_START = """
import gc, json, sys
if sys.argv[1] == "frozen":
    doomed = [[]]
    gc.freeze()  # Python 3.12 starts with a few hundred objects frozen
else:
    gc.set_threshold(2000, 10, 10)  # Python 3.13's own thresholds
from parley.server import tune_gc
if sys.argv[1] == "frozen":
    del doomed  # frozen objects die as later imports run (a few per start on 3.12 and 3.13)
print(json.dumps({"tuned": tune_gc(), "threshold": gc.get_threshold()}))
"""


@pytest.mark.parametrize("start", ["frozen", "threshold-2000"])
def test_the_collector_is_tuned_as_python_3_12_and_3_13_start(start: str) -> None:
    # Both differ from Python 3.11's start; read as "the process set its own", they had
    # left every server on 3.12 and 3.13 untuned, with full collections in its tail.
    result = run_fresh(AS_NEWER_PYTHONS_START, start)
    assert result == {"tuned": True, "threshold": [40_000, 100, 10]}


GARBAGE = """
import asyncio, gc, json
from parley.server import create_app
from tests.server.agents import card, story

async def send(app, number):  # the ASGI app called as a server calls it (no client objects)
    body = json.dumps({"jsonrpc": "2.0", "id": number, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": f"m-{number}", "role": "user",
                    "parts": [{"kind": "text", "text": "tell"}]}}}).encode()
    scope = {"type": "http", "method": "POST", "path": "/", "root_path": "", "scheme": "http",
             "query_string": b"", "headers": [(b"host", b"agent"),
             (b"content-type", b"application/json")], "client": ("10.0.0.1", 1)}
    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def respond(message):
        sent.append(message)

    await app(scope, receive, respond)
    assert b'"completed"' in sent[-1]["body"], sent

async def main():
    app = create_app(story, card(), tune_gc=False)
    for number in range(20):  # warm-up: first-use caches
        await send(app, number)
    await asyncio.sleep(0.1)
    gc.collect()
    gc.disable()
    for number in range(100, 300):
        await asyncio.gather(*(send(app, number * 10 + k) for k in range(4)))
    await asyncio.sleep(0.1)
    print(json.dumps({"unreachable": gc.collect(), "sends": 800}))

asyncio.run(main())
"""


def test_a_finished_send_leaves_no_cycles_for_the_collector() -> None:
    # What a request leaves behind must be freed by reference counting: cyclic garbage
    # is found only by collections, whose pauses are the p99 of a busy server. (A live
    # task and its run slot referred to each other: 47 objects of every send.)
    result = run_fresh(GARBAGE, timeout=120)
    assert result["unreachable"] < result["sends"] // 4, result


FOLLOWING = """
import gc, json
from parley.server import tune_gc

assert tune_gc()
seen = [gc.get_threshold()[0]]
held = []
for _ in range(400_000):  # alive, as requests in flight are: collections free nothing
    held.append([])
seen.append(gc.get_threshold()[0])
del held
for _ in range(400_000):  # cycles only a collection frees, as an agent's own may be
    cycle = []
    cycle.append(cycle)
seen.append(gc.get_threshold()[0])
print(json.dumps(seen))
"""


def test_the_young_threshold_follows_what_is_alive() -> None:
    # A young collection costs what it finds alive: where a busy server holds more than
    # the threshold, every collection walked it all and freed nothing (hundreds of
    # streams in flight). Such a collection raises the threshold; one
    # that frees much (garbage made faster) lowers it again.
    start, holding, collecting = run_fresh(FOLLOWING)
    assert start == 40_000
    assert holding >= 4 * start, (start, holding)
    assert collecting < holding, (holding, collecting)
