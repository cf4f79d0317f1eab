"""The inspector's ASGI app: the page (static files shipped in the package), its API,
the push receiver, all behind the guard (``_guard``)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Collection
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from parley.inspect._api import API, BadRequest, endpoint
from parley.inspect._guard import Guard
from parley.inspect._session import Connections

STATIC = Path(__file__).parent / "static"


class InspectorApp:
    """The inspector's ASGI app; ``aclose`` ends its connections and their live feeds,
    which a page keeps open (call it when the server starts to shut down)."""

    def __init__(self, app: ASGIApp, connections: Connections) -> None:
        self.app = app
        self.connections = connections

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    async def aclose(self) -> None:
        await self.connections.aclose()


def create_inspector_app(token: str, hosts: Collection[str] = (), *, port: int = 0) -> InspectorApp:
    """The inspector: its page at ``/``, answering only requests that carry ``token``
    (see ``Guard``) to one of ``hosts``; ``port`` names its cookie, so that inspectors
    on two ports of one host do not share one."""
    connections = Connections()
    api = API(connections)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with connections:
            yield

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    routes = [
        Route("/", page),
        Route("/api/card", endpoint(api.card), methods=["POST"]),
        Route("/api/checks", endpoint(api.checks), methods=["POST"]),
        Route("/api/connect", endpoint(api.connect), methods=["POST"]),
        Route("/api/send", endpoint(api.send), methods=["POST"]),
        Route("/api/resubscribe", endpoint(api.resubscribe), methods=["POST"]),
        Route("/api/cancel", endpoint(api.cancel), methods=["POST"]),
        Route("/api/feed/{id}", api.feed),
        Route("/push/{id}", _PushRoute(connections), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    guarded = Guard(app, token, hosts, cookie=f"parley-inspect-{port}")
    return InspectorApp(guarded, connections)


class _PushRoute:
    """Hands a notification to the receiver of the connection its path names."""

    def __init__(self, connections: Connections) -> None:
        self.connections = connections

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            connection = self.connections.get(scope["path_params"]["id"])
        except KeyError:
            response = Response(b'{"error": "no such connection"}', 404)
            await response(scope, receive, send)
            return
        await connection.receive_push(scope, receive, send)


__all__ = ["BadRequest", "InspectorApp", "create_inspector_app"]
