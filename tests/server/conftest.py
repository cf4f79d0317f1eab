from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from parley.server import A2AApp
from tests.server.agents import ScriptedAgent, scripted_app


@pytest.fixture
def app_and_agent() -> tuple[A2AApp, ScriptedAgent]:
    return scripted_app()


@pytest.fixture
def agent(app_and_agent: tuple[A2AApp, ScriptedAgent]) -> ScriptedAgent:
    return app_and_agent[1]


@pytest.fixture
async def client(app_and_agent: tuple[A2AApp, ScriptedAgent]) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client talking to the app in memory (no socket)."""
    transport = httpx.ASGITransport(app=app_and_agent[0])
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        yield http
    await app_and_agent[0].handler.aclose()
