"""An agent that declares push notifications and makes ten artifact chunks: served by
``parley serve`` in a subprocess that the restart test kills with notifications pending."""

from __future__ import annotations

from collections.abc import AsyncIterator

from parley.server import AgentContext
from parley.server import agent as as_agent
from parley.types import AgentCapabilities, AgentCard

CHUNKS = 10


@as_agent
async def agent(ctx: AgentContext) -> AsyncIterator[str]:
    for n in range(CHUNKS):
        yield f"chunk {n}\n"


card = AgentCard(
    name="push agent",
    description="Ten chunks, each one a push notification.",
    url="",
    version="0.1.0",
    capabilities=AgentCapabilities(streaming=True, push_notifications=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
)
