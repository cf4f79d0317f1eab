"""`parley serve` run as a person would: a subprocess on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

PARLEY = str(Path(sys.executable).with_name("parley"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_serve_starts_the_demo_agent_and_says_where() -> None:
    port = free_port()
    process = subprocess.Popen(
        [PARLEY, "serve", "--port", str(port), "--db", "memory"]
        if _has_db_option()
        else [PARLEY, "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        card = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and card is None:
            try:
                card = httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json").json()
            except httpx.TransportError:
                time.sleep(0.1)
        assert card is not None, "parley serve did not answer"
        assert card["name"] == "parley demo agent"
        assert card["url"] == f"http://127.0.0.1:{port}/"
        reply = httpx.post(
            f"http://127.0.0.1:{port}/",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "message/send",
                "params": {
                    "message": {
                        "role": "user",
                        "messageId": "m",
                        "parts": [{"kind": "text", "text": "tell me a joke"}],
                    }
                },
            },
        ).json()
        assert reply["result"]["status"]["state"] == "completed"
        assert "agent" in reply["result"]["artifacts"][0]["parts"][0]["text"]
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
    assert f"http://127.0.0.1:{port}/" in err
    assert "parley chat" in err


def _has_db_option() -> bool:
    help_text = subprocess.run([PARLEY, "serve", "--help"], capture_output=True, text=True).stdout
    return "--db" in help_text
