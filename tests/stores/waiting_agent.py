"""An agent that works until a file appears: served by ``parley serve`` in subprocesses
that a test stalls while the task runs. The message names the file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from parley.server import AgentContext
from parley.server import agent as as_agent
from parley.types import AgentCapabilities, AgentCard


@as_agent
async def agent(ctx: AgentContext) -> AsyncIterator[str]:
    yield "started\n"
    release = Path(ctx.text.strip())
    for _ in range(1200):  # at most a minute
        if await asyncio.to_thread(release.exists):
            break
        await asyncio.sleep(0.05)
    yield "released\n"


card = AgentCard(
    name="waiting agent",
    description="Works until a file appears.",
    url="",
    version="0.1.0",
    capabilities=AgentCapabilities(streaming=True, push_notifications=False),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
)
