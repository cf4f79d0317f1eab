"""The examples start the way their comments say, from the repository's root and from
examples/ itself: ``uvicorn`` and ``parley serve``, each a real process on 127.0.0.1
answering the agent card (spec 5.3: the card at /.well-known/agent-card.json)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.cli.test_serve import free_port
from tests.servers import parley_serve

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _card_of(command: list[str], cwd: Path, port: int) -> dict[str, object]:
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                url = f"http://127.0.0.1:{port}/.well-known/agent-card.json"
                card: dict[str, object] = httpx.get(url, timeout=2).json()
                return card
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    _, errors = process.communicate(timeout=10)
                    raise AssertionError(f"{command} did not serve:\n{errors}") from None
                time.sleep(0.1)
    finally:
        process.terminate()
        process.communicate(timeout=10)


@pytest.mark.parametrize("example", ["greeter", "greeter_executor"])
@pytest.mark.parametrize("where", ["root", "examples"])
def test_uvicorn_serves_the_example(example: str, where: str) -> None:
    port = free_port()
    cwd, target = (
        (ROOT, f"examples.{example}:app")
        if where == "root"
        else (
            ROOT / "examples",
            f"{example}:app",
        )
    )
    command = [str(BIN / "uvicorn"), target, "--port", str(port), "--log-level", "warning"]
    assert _card_of(command, cwd, port)["name"] == "Greeter"


def test_parley_serve_serves_the_example_agent_with_its_card(tmp_path: Path) -> None:
    """``module:agent`` with ``card`` beside it: parley builds the app, with --db."""
    arguments = ["examples.greeter:greeter", "--db", "memory"]
    with parley_serve(arguments, tmp_path / "serve.log") as (_, base):
        card = httpx.get(f"{base}/.well-known/agent-card.json", timeout=10).json()
    assert card["name"] == "Greeter"
