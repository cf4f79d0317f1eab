"""An agent that streams a long artifact slowly: served by ``parley serve`` in a
subprocess that the restart test kills mid-stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from parley.server import AgentContext
from parley.server import agent as as_agent
from parley.types import AgentCapabilities, AgentCard

CHUNKS = 400


@as_agent
async def agent(ctx: AgentContext) -> AsyncIterator[str]:
    for n in range(CHUNKS):
        await asyncio.sleep(0.01)
        yield f"chunk {n}\n"


card = AgentCard(
    name="slow agent",
    description="Streams a long artifact slowly.",
    url="",
    version="0.1.0",
    capabilities=AgentCapabilities(streaming=True, push_notifications=False),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
)
