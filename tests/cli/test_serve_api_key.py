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


def test_card_verify_and_credentials_from_the_cli(tmp_path: Path) -> None:
    """``parley card --verify`` checks the signature the served card carries (the key
    from --signing-key); ``parley send --api-key`` gets through, without it exit 6."""
    import subprocess
    import sys

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key_file = tmp_path / "signing.pem"
    key_file.write_bytes(pem)
    parley = str(Path(sys.executable).with_name("parley"))
    arguments = ["--db", "memory", "--api-key", "alice:k-alice", "--signing-key", str(key_file)]
    with parley_serve(arguments, tmp_path / "serve.log") as (_, base):

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([parley, *args], capture_output=True, text=True, timeout=60)

        verified = cli("card", base, "--verify")
        sent = cli("send", base, "hello", "--api-key", "k-alice")
        refused = cli("send", base, "hello")
    assert verified.returncode == 0, verified.stderr
    assert "signature: verified by key" in verified.stderr
    assert sent.returncode == 0, sent.stderr
    assert refused.returncode == 6
    assert "X-API-Key" in refused.stderr
