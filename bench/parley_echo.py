"""parley's echo agent for the benchmark: ``@agent``, in-memory store.

``message/send`` of any text completes a task with the text as its artifact;
``stream`` streams 10 artifact chunks (``stream apart``: the agent waits a loop turn
between them, so each is published, and stored, on its own). Serve with
``uvicorn bench.parley_echo:app``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from parley.server import AgentContext, agent, create_app
from parley.types import AgentCapabilities, AgentCard, AgentSkill

CHUNKS = 10


@agent
async def echo(ctx: AgentContext) -> AsyncIterator[str]:
    text = ctx.text
    if text in ("stream", "stream apart"):
        for index in range(CHUNKS):
            if index and text == "stream apart":  # as an agent awaiting a model's tokens:
                await asyncio.sleep(0)  # each chunk its own store write
            yield f"chunk {index} of the streamed answer;"
    else:
        yield text


card = AgentCard(
    name="bench echo",
    description="Echoes text.",
    url="",
    version="1.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="echo", name="Echo", description="Echoes text.", tags=["echo"])],
)
app = create_app(echo, card)
