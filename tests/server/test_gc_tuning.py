"""The app's lifespan tunes the garbage collector once per process (``tune_gc``).

Each case runs in a fresh interpreter: the tuning is process-wide and happens once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

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
    app = create_app(story, card(), tune_gc=tune)
    async with app.router.router.lifespan_context(app.router):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
            card_status = (await client.get("/.well-known/agent-card.json")).status_code
        print(json.dumps({
            "before": before,
            "threshold": gc.get_threshold(),
            "frozen": gc.get_freeze_count(),
            "card": card_status,
        }))

asyncio.run(main(json.loads(sys.argv[1]), json.loads(sys.argv[2])))
"""


def serve_once(tune: bool, preset: tuple[int, int, int] | None = None) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), json.dumps(tune), json.dumps(preset)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["card"] == 200
    return result


@pytest.mark.parametrize(
    ("tune", "preset", "threshold", "frozen"),
    [
        pytest.param(True, None, [10_000, 10, 10], True, id="tuned-by-default"),
        pytest.param(False, None, [700, 10, 10], False, id="tune_gc-false-leaves-it"),
        pytest.param(True, (2000, 5, 5), [2000, 5, 5], False, id="own-settings-respected"),
    ],
)
def test_lifespan_tunes_the_collector_once(
    tune: bool, preset: tuple[int, int, int] | None, threshold: list[int], frozen: bool
) -> None:
    result = serve_once(tune, preset)
    assert result["threshold"] == threshold
    assert bool(result["frozen"]) is frozen
