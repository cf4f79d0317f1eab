"""``parley serve --api-key NAME:SECRET``: the demo agent declares and requires an API
key in header X-API-Key (docs/security.md), each NAME a principal owning its tasks."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.servers import parley_serve

SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "message/send",
    "params": {
        "message": {"role": "user", "messageId": "m1", "parts": [{"kind": "text", "text": "hi"}]}
    },
}


def test_serve_with_api_keys_requires_one(tmp_path: Path) -> None:
    arguments = ["--db", "memory", "--api-key", "alice:k-alice", "--api-key", "bob:k-bob"]
    with parley_serve(arguments, tmp_path / "serve.log") as (_, base):
        card = httpx.get(f"{base}/.well-known/agent-card.json").json()
        anonymous = httpx.post(f"{base}/", json=SEND)
        wrong = httpx.post(f"{base}/", json=SEND, headers={"X-API-Key": "k-carol"})
        alice = httpx.post(f"{base}/", json=SEND, headers={"X-API-Key": "k-alice"})
        task_id = alice.json()["result"]["id"]
        get = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task_id}}
        by_bob = httpx.post(f"{base}/", json=get, headers={"X-API-Key": "k-bob"})
        by_alice = httpx.post(f"{base}/", json=get, headers={"X-API-Key": "k-alice"})
    assert card["securitySchemes"]["apiKey"] == {
        "type": "apiKey",
        "name": "X-API-Key",
        "in": "header",
        "description": "A key given to parley serve --api-key",
    }
    assert card["security"] == [{"apiKey": []}]
    assert anonymous.status_code == 401
    assert "X-API-Key" in anonymous.json()["error"]["message"]
    assert wrong.status_code == 401
    assert "result" in alice.json()
    assert by_bob.json()["error"]["code"] == -32001
    assert by_alice.json()["result"]["id"] == task_id


def test_serve_refuses_a_malformed_api_key(tmp_path: Path) -> None:
    import subprocess
    import sys

    parley = str(Path(sys.executable).with_name("parley"))
    done = subprocess.run(
        [parley, "serve", "--api-key", "no-colon"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "NAME:SECRET" in done.stderr
