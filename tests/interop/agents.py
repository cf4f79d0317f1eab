"""The agent parley serves to the official SDK's client, and what it answers.

The first word of the message picks the behaviour, the same words the SDK server peer
(``peers/sdk_server.py``) understands, so both directions run one scenario table:

- ``message ...``: a direct Message reply, no task;
- ``stream N``: a task with one artifact streamed in N chunks;
- ``slow``: ``working``, then three chunks 0.3 s apart (resubscribe joins it midway);
- ``wait``: ``working``, then waits until canceled;
- ``ask``: ``input-required``; the next message on the task completes it;
- anything else: a task that completes with ``echo: <text>``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from parley.server import A2AApp, AgentContext, GRPCOptions, InputRequired, agent, create_app
from parley.server.push import PushSettings
from parley.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Message,
    Role,
    TextPart,
)

Output = str | Message | InputRequired


@agent
async def interop(ctx: AgentContext) -> AsyncIterator[Output]:
    """Plays the scenario named by the first word of the message (see the module docs)."""
    text = ctx.text.strip()
    word, _, rest = text.partition(" ")
    if ctx.task is not None and ctx.task.status.state.value == "input-required":
        yield f"thanks for: {text}"
    elif word == "message":
        yield Message(
            message_id=f"reply-{ctx.task_id}", role=Role.agent, parts=[TextPart(text=rest)]
        )
    elif word == "stream":
        for index in range(int(rest or "3")):
            yield f"chunk {index};"
    elif word == "slow":
        await ctx.progress("working slowly")
        for index in range(3):
            await asyncio.sleep(0.3)
            yield f"part {index};"
    elif word == "wait":
        await ctx.progress("waiting to be canceled")
        await asyncio.sleep(60)
    elif word == "ask":
        yield InputRequired("What else?")
    else:
        yield f"echo: {text}"


def interop_card(*, streaming: bool = True, extended: bool = True, push: bool = False) -> AgentCard:
    return AgentCard(
        name="parley interop agent",
        description="Answers the official SDK's client in the interop suite.",
        url="",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text.", tags=["echo"])],
        supports_authenticated_extended_card=True if extended else None,
    )


def extended_card() -> AgentCard:
    card = interop_card()
    return card.model_copy(
        update={
            "name": "parley interop agent (extended)",
            "skills": [
                *card.skills,
                AgentSkill(id="secret", name="Secret", description="Extended only.", tags=["x"]),
            ],
        }
    )


def interop_app(*, streaming: bool = True, extended: bool = True, push: bool = False) -> A2AApp:
    """parley's interop agent on every binding: JSON-RPC at ``/``, HTTP+JSON at ``/v1/...``
    and gRPC on a free port of 127.0.0.1, all three in the card's ``additionalInterfaces``
    (parley fills them in), so the SDK's ``ClientFactory`` picks one as its users' would.
    With ``push`` it declares push notifications and may post to 127.0.0.1."""
    return create_app(
        interop,
        interop_card(streaming=streaming, extended=extended, push=push),
        push=PushSettings(allow=["127.0.0.1/32"]) if push else None,
        extended_card=extended_card() if extended else None,
        rest=True,
        grpc=GRPCOptions(host="127.0.0.1", port=0),
    )
