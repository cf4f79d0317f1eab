"""The ASGI app: agent card, the JSON-RPC and HTTP+JSON bindings, health, and the gRPC
server beside them; runs on its own or mounted in Starlette or FastAPI."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Unpack

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from parley.protocol._versions import V1_0
from parley.protocol.early import authentication_of
from parley.protocol.v1 import card_json_v1
from parley.server import _gc
from parley.server._card import (
    FORWARDED,
    CardPublisher,
    RenderedCard,
    TrustedProxies,
    binding_path,
    card_signer,
    check_card,
    resolve_target,
)
from parley.server._settings import (
    AppOptions,
    ExtendedCard,
    Serving,
    ServingOptions,
    serving,
    split,
)
from parley.server.agent._agent import AgentExecutor
from parley.server.agent._card_error import CardError
from parley.server.agent._context import CallContext
from parley.server.auth._auth import Authenticator, SchemeVerifier, card_challenge
from parley.server.bindings import JSONRPCBinding
from parley.server.bindings._grpc_options import GRPCOptions
from parley.server.bindings._http import etag_matches, supported_version_asked
from parley.server.bindings._http_auth import AuthenticationLayer, Challenging
from parley.server.bindings._jsonrpc import refusal
from parley.server.tasks._handler import RequestHandler
from parley.types import AgentCard, TransportProtocol

AGENT_CARD_PATH = "/.well-known/agent-card.json"
OLD_AGENT_CARD_PATH = "/.well-known/agent.json"
JWKS_PATH = "/.well-known/jwks.json"


class A2AApp:
    """An A2A agent as an ASGI app: serves a ``RequestHandler``; ``create_app`` builds one
    for an agent and its card.

    Serves the card at ``/.well-known/agent-card.json`` (and at the older
    ``/.well-known/agent.json``, with 2025-early's ``authentication`` member added), the
    JSON-RPC binding at the path of the card's ``url`` (``/`` when the url is left empty
    for parley to fill; it speaks v0.3 and the 2025-early dialect), the public keys of
    ``signing_keys`` at ``/.well-known/jwks.json`` (a fresh key when none is given: see
    ``SigningKeys``), and ``/health``. When the card declares
    ``capabilities.pushNotifications`` the app serves push (``push``: ``PushSettings``,
    the defaults when not given; see docs/push.md). The card is
    checked here, so a card that promises what the server does not do fails at startup
    with ``CardError`` naming the field.

    HTTP+JSON (REST, ``/v1/...`` under ``rest_path``) is served unless ``rest`` is false.
    With ``grpc`` options the app's lifespan runs the gRPC server beside it, on the same
    event loop. A card that leaves ``additionalInterfaces`` empty is given one entry per
    binding served.

    ``A2AApp(handler, **serving)`` serves a ``RequestHandler`` (yours, a subclass, or
    one built with options of its own): the agent, card, task store, extended card,
    retention, signing keys and push settings are the handler's, and the keywords here
    are how the app serves it (``Serving``). ``create_app(agent, card, **options)``
    builds the handler for an agent and serves it. The extended card the handler serves
    is completed like the public one.

    Run on its own (uvicorn, ``parley serve``), the app's lifespan starts and stops the
    agent: recovery of tasks a previous process left, retention, the gRPC server. Mounted
    in another app, give that app ``lifespan=app.lifespan`` (or enter ``app.lifespan()``
    in its own): mounted apps get no lifespan events.

    ``security`` maps each scheme the card's ``security`` requirements name to the
    verifier that checks it (see docs/security.md); every call on every binding is then
    authenticated before it runs; the card, its JWKS and ``/health`` stay public. A card
    that declares security without verifiers fails with ``CardError``: parley never
    serves a card whose promise it does not keep.

    The card is served in the shape of the A2A version the request asks for
    (``A2A-Version``, header or query): v1.0's card to ``1.0``, and to every other
    request (none, ``0.3``) the v0.3 card that also lists v1.0's ``supportedInterfaces``.
    Caches may keep it ``card_max_age`` seconds (``Cache-Control``); its ``ETag`` answers
    ``If-None-Match`` with 304.

    ``sign_card``: sign the served card (public and extended) with the current key of
    the signing keys, a JWS over the RFC 8785 form of each version's card in its
    ``signatures`` (docs/security.md); by default the card is signed when
    ``signing_keys`` are given, i.e. when the key is the operator's rather than one
    generated for this process.

    ``forwarded_allow_ips``: the proxies whose ``X-Forwarded-Proto``/``-Host`` say where
    the client reached the server (see ``TrustedProxies``; uvicorn's own proxy-header
    handling rewrites the client address, so serve with ``proxy_headers=False``).

    ``create_app``'s ``bus`` and ``lease_ttl`` (the handler's) matter when several
    processes share a PostgreSQL store (docs/deploy.md): the event bus between them
    (PostgreSQL ``LISTEN/NOTIFY`` by default, or a ``RedisBus``) and how long a task's
    lease lasts without renewal.

    ``create_app``'s ``tracer_provider`` and ``meter_provider`` (the handler's): where
    the agent's spans and metrics go (by default the global OpenTelemetry providers, when
    set; see docs/observability.md).

    With ``tune_gc`` (the default) the lifespan tunes the process's garbage collector for
    serving once startup is done (``parley.server.tune_gc``: freeze what startup built,
    fewer young collections), unless the process has set its own collector settings.
    """

    def __init__(self, handler: RequestHandler, **options: Unpack[ServingOptions]) -> None:
        if not isinstance(handler, RequestHandler):
            raise TypeError(
                f"A2AApp serves a RequestHandler, not {type(handler).__name__}: for an agent "
                "and its card, use create_app(agent, card, ...)"
            )
        settings = serving(options)
        self.tune_gc = settings.tune_gc
        self.proxies = TrustedProxies(settings.forwarded_allow_ips)
        self.max_body_size = settings.max_body_size
        self.card_max_age = settings.card_max_age
        self._running = False
        if handler.extended_card is not None:
            handler.extended_card = self._completed(handler.extended_card)
        self.handler = handler
        self.signing_keys = handler.signing_keys
        self.authenticator = _authenticator(handler.card, settings.security)
        self.grpc_options = settings.grpc
        self.grpc_server: Any = None
        targets = self._bindings(handler.card, settings)
        self._publish_card(handler.card, targets, settings.sign_card is True)
        self.router = Starlette(
            routes=[
                Route(AGENT_CARD_PATH, self._card, methods=["GET"]),
                Route(OLD_AGENT_CARD_PATH, self._old_card, methods=["GET"]),
                Route(JWKS_PATH, self._jwks, methods=["GET"]),
                Route("/health", self._health, methods=["GET"]),
            ],
            lifespan=self.lifespan,
        )

    def _bindings(self, card: AgentCard, settings: Serving) -> dict[str, str]:
        """Make the HTTP bindings served (and their authentication layers); the target of
        each binding the card is to list, by transport."""
        preferred = card.preferred_transport
        self.rpc_path = binding_path(card) if preferred == TransportProtocol.jsonrpc else "/"
        targets = {TransportProtocol.jsonrpc.value: self.rpc_path}
        size = self.max_body_size
        served = self._served(TransportProtocol.jsonrpc)
        self.jsonrpc = JSONRPCBinding(served, max_body_size=size, card=self._public_card)
        self.rest: Any = None
        if settings.rest is not False:
            from parley.server.bindings._rest import RESTBinding

            rest_path = settings.rest_path
            if rest_path is None:
                from_card = preferred == TransportProtocol.http_json
                rest_path = binding_path(card, "") if from_card else ""
            served = self._served(TransportProtocol.http_json)
            self.rest = RESTBinding(served, prefix=rest_path, max_body_size=size)
            targets[TransportProtocol.http_json.value] = self.rest.prefix
        self._jsonrpc, self._rest = self._guarded(card)
        if self.grpc_options is not None:
            targets[TransportProtocol.grpc.value] = f":{self.grpc_options.port}"
        return targets

    def _guarded(self, card: AgentCard) -> tuple[Any, Any]:
        """The HTTP bindings as served: behind the authentication layer when the card
        requires security, and answering every 401 with the card's challenges."""
        jsonrpc: Any = self.jsonrpc
        rest: Any = self.rest
        authenticator = self.authenticator
        if authenticator is not None:
            jsonrpc = AuthenticationLayer(jsonrpc, authenticator, refusal)
            if rest is not None:
                rest = AuthenticationLayer(rest, authenticator, self.rest.refusal)
        challenge = authenticator.www_authenticate if authenticator else card_challenge(card)
        if challenge:
            jsonrpc = Challenging(jsonrpc, challenge)
            rest = Challenging(rest, challenge) if rest is not None else None
        return jsonrpc, rest

    def _publish_card(self, card: AgentCard, targets: dict[str, str], sign: bool) -> None:
        """Check the card against what is served, and get it ready to serve."""
        served = {name: resolve_target(target, card.url) for name, target in targets.items()}
        if card.url and card.preferred_transport in served:
            served[card.preferred_transport] = card.url
        check_card(card, served, extended_card=self.handler.extended_card is not None)
        signer = card_signer(self.signing_keys) if sign else None
        self.card = CardPublisher(card, targets, signer, {V1_0: card_json_v1})
        self._old_card_tail = b',"authentication":%s}' % authentication_of(card).to_json()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if self.proxies.trusts(scope.get("client")):
                scope[FORWARDED] = True
            path: str = scope["path"]
            root: str = scope.get("root_path", "")
            if root and path.startswith(root):  # mounted: the path within the mount
                path = path[len(root) :] or "/"
            if path == self.rpc_path:
                await self._jsonrpc(scope, receive, send)
                return
            if self.rest is not None and self.rest.handles(path):
                await self._rest({**scope, "path": path}, receive, send)
                return
        await self.router(scope, receive, send)

    @property
    def grpc_port(self) -> int | None:
        """The port the gRPC server listens on, once the app has started."""
        port = self.card.served.get(TransportProtocol.grpc.value)
        return int(port[1:]) if port and self.grpc_server is not None else None

    def add_grpc(self, options: GRPCOptions) -> None:
        """Also run the gRPC server, with ``options``, from the app's start (``parley
        serve --grpc-port`` does this for an app built without one)."""
        if self.grpc_server is not None:
            raise RuntimeError("the gRPC server is already running")
        self.grpc_options = options

    async def start_grpc(self) -> None:
        """Start the gRPC server (the lifespan does; call it yourself without one)."""
        if self.grpc_options is None or self.grpc_server is not None:
            return
        from parley.server.bindings._grpc import GRPCBinding, start_server

        binding = GRPCBinding(self._served(TransportProtocol.grpc))
        interceptors = []
        if self.authenticator is not None:
            from parley.server.bindings._grpc_auth import AuthInterceptor

            interceptors.append(AuthInterceptor(self.authenticator))
        self.grpc_server, port = await start_server(
            binding, self.grpc_options, self.max_body_size, interceptors
        )
        self.card.serve(TransportProtocol.grpc.value, f":{port}")

    async def stop_grpc(self, grace: float | None = 1.0) -> None:
        server, self.grpc_server = self.grpc_server, None
        if server is not None:
            await server.stop(grace)

    def _served(self, transport: TransportProtocol) -> RequestHandler:
        """The handler as the binding of ``transport`` calls it: each operation in a
        server span when telemetry is on (see ``parley.telemetry``)."""
        telemetry = self.handler.telemetry
        return self.handler if telemetry is None else telemetry.serve(self.handler, transport.value)

    def _completed(self, extended: ExtendedCard) -> Callable[[CallContext], Awaitable[AgentCard]]:
        """The extended card, completed like the public one for the caller's base URL."""

        async def completed(call: CallContext) -> AgentCard:
            card = extended if isinstance(extended, AgentCard) else await extended(call)
            completed = self.card.complete(card, call.base_url)
            return self.card.signed(completed, call.protocol_version)

        return completed

    async def _card(self, request: Request) -> Response:
        rendered = self.card.render(request.scope, supported_version_asked(request.scope))
        return self._cacheable(request, rendered)

    def _cacheable(self, request: Request, rendered: RenderedCard) -> Response:
        """The card, with what caches need (v1.0.1 §8.6.1): its ETag (``If-None-Match``
        naming it is answered 304), ``Cache-Control: max-age``, and ``Vary: A2A-Version``
        as each version has a card of its own."""
        headers = {
            "ETag": rendered.etag.decode(),
            "Cache-Control": f"public, max-age={self.card_max_age}",
            "Vary": "A2A-Version",
        }
        if etag_matches(request.headers.get("if-none-match"), rendered.etag):
            return Response(status_code=304, headers=headers)
        return Response(rendered.body, media_type="application/json", headers=headers)

    async def _jwks(self, request: Request) -> Response:
        return Response(
            self.signing_keys.jwks_json,
            media_type="application/jwk-set+json",
            headers={"Cache-Control": "public, max-age=300"},
        )

    async def _old_card(self, request: Request) -> Response:
        # The path 2025-early clients read, and older v0.3 clients too: the v0.3 card with
        # 2025-early's `authentication` member added, which each kind of client ignores
        # when it does not know it (docs/dialect-2025-early.md). A signed card is left
        # as signed.
        rendered = self.card.render(request.scope).body
        if b'"signatures"' not in rendered and rendered.endswith(b"}"):  # signed: as signed
            rendered = rendered[:-1] + self._old_card_tail
        return self._cacheable(request, RenderedCard(rendered))

    def _public_card(self, call: CallContext) -> AgentCard:
        return self.card.complete(self.card.card, call.base_url)

    async def _health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    @asynccontextmanager
    async def lifespan(self, app: object = None) -> AsyncIterator[None]:
        """Start the agent, and stop it on exit: settle the tasks a previous process left
        running, start retention and the gRPC server; on exit stop them and every run
        still going. The app's own lifespan; pass it to the app this one is mounted in
        (``Starlette(lifespan=a2a.lifespan)``, ``FastAPI(lifespan=a2a.lifespan)``).

        Raises ``RuntimeError`` if it is already running, and whatever start-up meets
        (``OSError`` for a gRPC port in use, the store's error for a database it cannot
        use), before yielding.
        """
        if self._running:
            raise RuntimeError("this A2AApp's lifespan is already running")
        self._running = True
        try:
            await self.handler.start()
            try:
                await self.start_grpc()
                if self.tune_gc:
                    _gc.tune_gc()
                yield
            finally:
                await self.stop_grpc()
                await self.handler.aclose()
        finally:
            self._running = False

    def mount_into(self, host: Starlette, path: str = "/agent") -> None:
        """Serve this agent at ``path`` of ``host`` (a Starlette or FastAPI app), with its
        lifespan run inside the host's: the host's own lifespan (``lifespan=``, or its
        start-up and shutdown handlers) still runs, within the agent's. Call it once the
        host's lifespan is set; the card is then at ``{path}/.well-known/agent-card.json``.
        """
        host.mount(path, self)
        hosts = host.router.lifespan_context

        @asynccontextmanager
        async def lifespan(app: Any) -> AsyncIterator[Any]:
            async with self.lifespan(app), hosts(app) as state:
                yield state

        host.router.lifespan_context = lifespan


def _authenticator(
    card: AgentCard, security: Mapping[str, SchemeVerifier] | None
) -> Authenticator | None:
    if security is None:
        if card.security:
            names = sorted({name for requirement in card.security for name in requirement})
            raise CardError(
                f"the card requires security ({', '.join(names)}) but no verifiers were "
                "given: pass security={scheme name: verifier}"
            )
        return None
    return Authenticator(card, security)


def create_app(agent: AgentExecutor, card: AgentCard, **options: Unpack[AppOptions]) -> A2AApp:
    """The ASGI app serving ``agent``, described by ``card``: ``A2AApp`` serving a
    ``RequestHandler`` built for the agent.

    The handler is given ``task_store``, ``extended_card``, ``retention``, ``push``,
    ``signing_keys``, ``bus``, ``lease_ttl``, ``tracer_provider`` and ``meter_provider``
    (see ``RequestHandler``); the app the rest, how it serves (``rest``, ``rest_path``,
    ``grpc``, ``max_body_size``, ``forwarded_allow_ips``, ``tune_gc``, ``security``,
    ``sign_card``: see ``A2AApp``).
    Push settings for a card that does not declare ``capabilities.pushNotifications``
    are a ``CardError``. The card is signed by default when ``signing_keys`` are given,
    i.e. when the key is the operator's rather than one generated for this process.
    """
    task, served = split(options)
    if task.get("push") is not None and not card.capabilities.push_notifications:
        raise CardError("push settings were given, but capabilities.pushNotifications is not true")
    if served.get("sign_card") is None:
        served["sign_card"] = task.get("signing_keys") is not None
    return A2AApp(RequestHandler(agent, card, **task), **served)
