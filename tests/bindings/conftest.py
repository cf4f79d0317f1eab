"""One real server for the binding tests: uvicorn (JSON-RPC, HTTP+JSON) with the gRPC
server in its lifespan, all on 127.0.0.1; and a client per binding, chosen from the card.

The schema observer of ``tests/conftest.py`` is narrowed here to the JSON-RPC path:
HTTP+JSON answers are proto-JSON (checked by the converter round trips), not JSON-RPC.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from parley.client import Client
from parley.client._factory import ClientConfig, ClientFactory
from parley.server import A2AApp, GRPCOptions, create_app
from tests.conformance import Observations, observe
from tests.server.agents import ScriptedAgent, card
from tests.servers import running

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
PROTOCOLS = ("0.3", "1.0")


@pytest.fixture(autouse=True)
def schema_conformance(monkeypatch: pytest.MonkeyPatch) -> Iterator[Observations]:
    seen = Observations()
    original = A2AApp.__call__

    async def observed(self: A2AApp, scope: dict[str, Any], receive: Any, send: Any) -> None:
        call = original.__get__(self)
        await observe(lambda s, r, w: call(s, r, w), scope, receive, send, seen, self.rpc_path)

    monkeypatch.setattr(A2AApp, "__call__", observed)
    yield seen
    if seen.violations:
        pytest.fail("the server emitted invalid JSON-RPC payloads:\n" + "\n".join(seen.violations))


class Served:
    def __init__(self, app: A2AApp, agent: ScriptedAgent, base: str) -> None:
        self.app = app
        self.agent = agent
        self.base = base


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    agent = ScriptedAgent()
    app = create_app(agent, card(), grpc=GRPCOptions(host="127.0.0.1", port=0))
    with running(app) as base:
        yield Served(app, agent, base)


async def connect(served: Served, binding: str, protocol: str | None = None) -> Client:
    """A parley client for the served agent that may use only ``binding`` (and only the
    A2A version ``protocol``; ``None``: the newest both speak)."""
    factory = ClientFactory(ClientConfig(transports=[binding], protocol=protocol))
    return await factory.connect(served.base)


@pytest.fixture(params=[(p, b) for p in PROTOCOLS for b in BINDINGS], ids="-".join)
async def client(request: pytest.FixtureRequest, served: Served) -> AsyncIterator[Client]:
    """One client per A2A version and binding: the scenario table runs six times against
    the same agent (v1.0.1 §5.1: every binding, and here every version, alike)."""
    protocol, binding = request.param
    async with await connect(served, binding, protocol) as connected:
        assert connected.transport.interface.protocol == protocol  # type: ignore[attr-defined]
        yield connected
