"""The ASGI app: agent card, JSON-RPC binding, health; mountable in Starlette or FastAPI."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from parley.server._agent import AgentExecutor
from parley.server._card import CardPublisher, binding_path, check_card
from parley.server._context import CallContext
from parley.server._handler import RequestHandler
from parley.server._retention import DEFAULT_RETENTION, Retention
from parley.server.bindings import JSONRPCBinding
from parley.server.bindings._http import DEFAULT_MAX_BODY_SIZE
from parley.stores import TaskStore
from parley.types import AgentCard, TransportProtocol

AGENT_CARD_PATH = "/.well-known/agent-card.json"
OLD_AGENT_CARD_PATH = "/.well-known/agent.json"


class A2AApp:
    """An A2A agent as an ASGI app.

    Serves the card at ``/.well-known/agent-card.json`` (and the older
    ``/.well-known/agent.json``), the JSON-RPC binding at the path of the card's ``url``
    (``/`` when the url is left empty for parley to fill), and ``/health``. The card is
    checked here, so a card that promises what the server does not do fails at startup
    with ``CardError`` naming the field.
    """

    def __init__(
        self,
        agent: AgentExecutor,
        card: AgentCard,
        *,
        task_store: TaskStore | None = None,
        extended_card: AgentCard | Callable[[CallContext], Awaitable[AgentCard]] | None = None,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        retention: Retention | None = DEFAULT_RETENTION,
    ) -> None:
        self.handler = RequestHandler(
            agent, card, task_store=task_store, extended_card=extended_card, retention=retention
        )
        self.rpc_path = binding_path(card)
        served = {TransportProtocol.jsonrpc.value: card.url or self.rpc_path}
        check_card(card, served, push_notifications=False, extended_card=extended_card is not None)
        self.card = CardPublisher(card, {TransportProtocol.jsonrpc.value: self.rpc_path})
        self.jsonrpc = JSONRPCBinding(self.handler, max_body_size=max_body_size)
        self.router = Starlette(
            routes=[
                Route(AGENT_CARD_PATH, self._card, methods=["GET"]),
                Route(OLD_AGENT_CARD_PATH, self._card, methods=["GET"]),
                Route("/health", self._health, methods=["GET"]),
            ],
            lifespan=self._lifespan,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _route_path(scope) == self.rpc_path:
            await self.jsonrpc(scope, receive, send)
        else:
            await self.router(scope, receive, send)

    async def _card(self, request: Request) -> Response:
        return Response(self.card.render(request.scope), media_type="application/json")

    async def _health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    @asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        await self.handler.start()
        try:
            yield
        finally:
            await self.handler.aclose()


def _route_path(scope: Scope) -> str:
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        return path[len(root) :] or "/"
    return path


def create_app(
    agent: AgentExecutor,
    card: AgentCard,
    *,
    task_store: TaskStore | None = None,
    extended_card: AgentCard | Callable[[CallContext], Awaitable[AgentCard]] | None = None,
    max_body_size: int = DEFAULT_MAX_BODY_SIZE,
    retention: Retention | None = DEFAULT_RETENTION,
) -> A2AApp:
    """The ASGI app serving ``agent`` described by ``card`` (see ``A2AApp``).

    ``retention`` says how long finished and waiting tasks are kept (a week by default;
    ``None`` keeps them forever)."""
    return A2AApp(
        agent,
        card,
        task_store=task_store,
        extended_card=extended_card,
        max_body_size=max_body_size,
        retention=retention,
    )
