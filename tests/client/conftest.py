"""A connected client per way of reaching the agent: real HTTP, and in memory."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from parley.client import Client, connect
from parley.demo import create_demo_app
from tests.servers import running


@pytest.fixture(params=["http", "memory"])
async def client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    """A client of the demo agent, over uvicorn on 127.0.0.1 or in memory."""
    app = create_demo_app()
    if request.param == "memory":
        async with connect(app) as in_memory:
            yield in_memory
        return
    with running(app) as url:
        async with connect(url) as over_http:
            yield over_http
