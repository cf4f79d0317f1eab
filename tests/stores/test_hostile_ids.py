"""Ids a store cannot hold (a NUL is an error to PostgreSQL) are refused before any store
sees them, with the same -32602 on every store (spec 8.1; docs/security.md "Limits")."""

from __future__ import annotations

import httpx

from parley.server import create_app
from parley.stores import Store
from tests.server.agents import ScriptedAgent, card


async def test_nul_in_an_id_is_invalid_params_on_every_store(store: Store) -> None:
    app = create_app(ScriptedAgent(), card(), task_store=store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        for method, params in [
            ("tasks/get", {"id": "a\u0000b"}),
            ("tasks/cancel", {"id": "a\u0000b"}),
            (
                "message/send",
                {
                    "message": {
                        "role": "user",
                        "messageId": "m\u0000",
                        "parts": [{"kind": "text", "text": "echo"}],
                    }
                },
            ),
        ]:
            body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            answer = await http.post("/", json=body)
            assert answer.status_code == 200
            assert answer.json()["error"]["code"] == -32602, method
