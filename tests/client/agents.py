"""Small agents and apps the client tests talk to."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from parley.server import A2AApp, AgentContext, agent, create_app
from parley.types import AgentCapabilities, AgentCard


def card(**fields: Any) -> AgentCard:
    values: dict[str, Any] = {
        "name": "test agent",
        "description": "for the client tests",
        "url": "",
        "version": "1",
        "capabilities": AgentCapabilities(streaming=True),
        "default_input_modes": ["text/plain"],
        "default_output_modes": ["text/plain"],
        "skills": [],
    }
    values.update(fields)
    return AgentCard(**values)


def slow_app(seconds: float, **card_fields: Any) -> A2AApp:
    """Answers after ``seconds``: longer than the read limit a test configures."""

    @agent
    async def slow(ctx: AgentContext) -> AsyncIterator[str]:
        await asyncio.sleep(seconds)
        yield f"done after {seconds} s"

    return create_app(slow, card(**card_fields))


def ticking_app(ticks: int, interval: float = 0.02) -> A2AApp:
    """Streams ``ticks`` chunks, ``interval`` apart."""

    @agent
    async def ticking(ctx: AgentContext) -> AsyncIterator[str]:
        for tick in range(ticks):
            await asyncio.sleep(interval)
            yield f"tick {tick}\n"

    return create_app(ticking, card())


class HeaderGate:
    """ASGI middleware: lets a request through only with the expected header, query
    parameter or cookie; records what each request carried."""

    def __init__(
        self, app: Any, *, header: tuple[str, str] | None = None, query: str | None = None
    ) -> None:
        self.app = app
        self.header = header
        self.query = query
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/.well-known"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        headers["?query"] = scope["query_string"].decode()
        self.seen.append(headers)
        allowed = True
        if self.header is not None:
            allowed = headers.get(self.header[0].lower()) == self.header[1]
        if self.query is not None:
            allowed = allowed and self.query in headers["?query"]
        if not allowed:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"text/plain")],
                }
            )
            await send({"type": "http.response.body", "body": b"no"})
            return
        await self.app(scope, receive, send)


async def lifespan(receive: Any, send: Any) -> None:
    """The ASGI lifespan protocol, for the bare test apps served on uvicorn."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
