"""``AgentKeys`` against a real JWKS endpoint: a refetch that fails keeps the keys."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from parley.client import AgentKeys, ClientError
from tests.client.agents import lifespan
from tests.servers import running


def _jwks(kid: str) -> bytes:
    jwk = json.loads(ECAlgorithm.to_jwk(ec.generate_private_key(ec.SECP256R1()).public_key()))
    return json.dumps({"keys": [{**jwk, "kid": kid, "alg": "ES256", "use": "sig"}]}).encode()


class _KeyServer:
    """Serves a JWKS until told to fail (503)."""

    def __init__(self) -> None:
        self.body = _jwks("k1")
        self.failing = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        status = 503 if self.failing else 200
        body = b"down" if self.failing else self.body
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": body})


async def test_a_failed_refetch_keeps_the_keys_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = _KeyServer()
    with running(server) as url:
        keys = AgentKeys(f"{url}/jwks.json", max_age=0.0, refresh_every=0.0)
        first = await keys.key("k1")
        server.failing = True
        with caplog.at_level(logging.WARNING, logger="parley.keys"):
            assert (await keys.key("k1")).key_id == first.key_id == "k1"
        assert [record.name for record in caplog.records] == ["parley.keys"]
        assert "the keys fetched before are kept" in caplog.records[0].getMessage()
        assert "503" in caplog.records[0].getMessage()


async def test_with_no_keys_yet_a_failed_fetch_is_a_client_error() -> None:
    server = _KeyServer()
    server.failing = True
    with running(server) as url, pytest.raises(ClientError, match="could not fetch the keys"):
        await AgentKeys(f"{url}/jwks.json").key("k1")
