"""``ClientFactory`` and ``connect``: from a card (or where to find one) to a ``Client``.

In the spirit of the official SDK's ``ClientFactory``: one ``ClientConfig`` says which
transports the client speaks and in which order, the time limits, the interceptors and
the extensions; the factory resolves the card, selects the interface (spec 5.6.3) and,
when the card offers an authenticated extended card and the client carries
credentials, fetches it and adopts it.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from parley.client._card import EARLY, fetch_card
from parley.client._card_verify import CardVerifier
from parley.client._client import Client
from parley.client._credentials import ClientTLS
from parley.client._errors import ClientError
from parley.client._interceptors import ClientInterceptor
from parley.client._selection import (
    FallbackTransport,
    candidate_interfaces,
    no_interface_message,
)
from parley.client._transport import Timeouts, Transport
from parley.client.transports._asgi import ASGIApp, StreamingASGITransport
from parley.client.transports._early import EarlyDialect
from parley.client.transports._jsonrpc import JSONRPCTransport
from parley.protocol import SUPPORTED_VERSIONS, major_minor
from parley.types import AgentCard

IN_MEMORY_URL = "http://agent.local"
"""The base URL an in-memory app is called at (no socket is opened)."""


@dataclass
class ClientConfig:
    transports: Sequence[str] | None = None
    """Transports the client may use, best first (card names, or jsonrpc/grpc/rest);
    ``None``: every registered one."""
    use_client_preference: bool = False
    """Order candidates by ``transports`` instead of by the agent's preference."""
    timeouts: Timeouts = field(default_factory=Timeouts)
    http_client: httpx.AsyncClient | None = None
    """Shared by the HTTP transports and card fetching; the caller closes it."""
    interceptors: Sequence[ClientInterceptor] = ()
    extensions: Sequence[str] = ()
    max_resumes: int = 3
    """How many times in a row a stream the agent broke again is resumed (an agent that
    cannot be reached is retried for ``resume_window`` instead)."""
    resume_window: float = 30.0
    """How long after a stream broke the client keeps trying to resume it (seconds):
    long enough for a server to restart."""
    extended_card: bool = True
    """Fetch the authenticated extended card when the card offers one and there are
    interceptors to carry credentials."""
    tls: ClientTLS | None = None
    """A client certificate (mutual TLS) and the CAs to trust, for every binding; ``connect``
    makes its HTTP client with them (give your own ``http_client`` the same settings)."""
    card_verifier: CardVerifier | None = None
    """Check the card's signatures (``CardVerifier``: trusted keys and a policy) before
    using it; ``CardError`` when the policy refuses it."""
    protocol: str | None = None
    """The protocol to speak: ``None`` (the newest A2A version both sides speak, from the
    card's ``supportedInterfaces``), ``"1.0"`` or ``"0.3"`` (that version only, transport
    from the card), or ``"2025-early"`` (the earlier JSON-RPC dialect, card from
    ``/.well-known/agent.json``, JSON-RPC at its ``url``)."""
    tenant: str | None = None
    """The ``tenant`` to send in every v1.0 request (v1.0.1 §8.3.2) instead of the
    selected interface's; ``None``: the interface's, if it has one. A v0.3 request has
    no tenant."""
    tracer_provider: Any = None
    """Where the client's spans go (an OpenTelemetry ``TracerProvider``); ``None``: the
    global one, when set (docs/observability.md)."""
    meter_provider: Any = None
    """Where the client's metrics go (an OpenTelemetry ``MeterProvider``); ``None``: the
    global one, when set."""


class ClientFactory:
    """Builds ``Client`` objects for agent cards with one configuration."""

    def __init__(self, config: ClientConfig | None = None) -> None:
        self.config = config or ClientConfig()

    def create(self, card: AgentCard) -> Client:
        """A client for the agent described by ``card``.

        Raises ``ClientError`` when no interface of the card uses a transport of the
        configuration.
        """
        config = self.config
        protocols = _protocols(config.protocol)
        if config.protocol == EARLY:
            return self._client(
                JSONRPCTransport(
                    card.url, config.http_client, timeouts=config.timeouts, dialect=EarlyDialect()
                ),
                card,
            )
        candidates = candidate_interfaces(
            card,
            config.transports,
            use_client_preference=config.use_client_preference,
            protocols=protocols,
        )
        if config.tenant is not None:
            candidates = [replace(c, tenant=config.tenant or None) for c in candidates]
        if not candidates:
            raise ClientError(
                "No interface of the agent can be used: "
                + no_interface_message(card, config.transports, protocols)
            )
        transport = FallbackTransport(
            candidates, config.http_client, timeouts=config.timeouts, tls=config.tls
        )
        return self._client(transport, card)

    def _client(self, transport: Transport, card: AgentCard) -> Client:
        config = self.config
        return Client(
            transport,
            card=card,
            interceptors=config.interceptors,
            extensions=config.extensions,
            max_resumes=config.max_resumes,
            resume_window=config.resume_window,
            tracer_provider=config.tracer_provider,
            meter_provider=config.meter_provider,
        )

    async def connect(self, source: str | AgentCard) -> Client:
        """A client for the agent at ``source``: a base URL, a card URL, a card file,
        or a card. Raises what ``fetch_card`` raises, and ``ClientError``."""
        config = self.config
        _protocols(config.protocol)
        card = (
            source
            if isinstance(source, AgentCard)
            else await fetch_card(
                source,
                config.http_client,
                timeouts=config.timeouts,
                protocol=config.protocol,
                verifier=config.card_verifier,
            )
        )
        client = self.create(card)
        if (
            config.protocol != EARLY
            and config.extended_card
            and card.supports_authenticated_extended_card
            and config.interceptors
        ):
            try:
                await client.get_extended_card()
            except BaseException:  # any failure, a timeout or cancellation too: the
                await client.aclose()  # client's own connections are closed, not leaked
                raise
        return client


PROTOCOLS = (*SUPPORTED_VERSIONS, EARLY)
"""The protocol ids ``ClientConfig.protocol`` (and ``parley --protocol``) accept."""


def _protocols(protocol: str | None) -> tuple[str, ...]:
    """The A2A versions to consider, newest first; raises ``ClientError`` for an id
    parley does not speak."""
    if protocol is None:
        return SUPPORTED_VERSIONS
    version = protocol if protocol in PROTOCOLS else major_minor(protocol)
    if version not in PROTOCOLS:
        raise ClientError(f"Unknown protocol {protocol!r}; parley speaks {', '.join(PROTOCOLS)}")
    return (version,)


def in_memory_http_client(app: ASGIApp) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose requests go straight to ``app``, streaming included."""
    return httpx.AsyncClient(transport=StreamingASGITransport(app), base_url=IN_MEMORY_URL)


class connect:  # used like a function: ``async with connect(url) as client``
    """A client for the agent at ``source``, as ``await connect(...)`` or
    ``async with connect(...) as client``.

    ``source``: a base URL, a card URL, a card file, an ``AgentCard``, or an ASGI app
    (a parley ``A2AApp``) to call in memory, with no socket. ``options`` are the fields
    of ``ClientConfig``.
    """

    def __init__(self, source: str | AgentCard | ASGIApp, **options: Any) -> None:
        self.source = source
        self.options = options
        self._client: Client | None = None
        self._owned_http: httpx.AsyncClient | None = None

    async def _open(self) -> Client:
        source = self.source
        if not isinstance(source, str | AgentCard):
            self._owned_http = in_memory_http_client(source)
            self.options.setdefault("http_client", self._owned_http)
            source = IN_MEMORY_URL
        elif self.options.get("tls") is not None and self.options.get("http_client") is None:
            self._owned_http = httpx.AsyncClient(verify=self.options["tls"].ssl_context())
            self.options["http_client"] = self._owned_http
        factory = ClientFactory(ClientConfig(**self.options))
        try:
            self._client = await factory.connect(source)
        except BaseException:
            await self._close_http()
            raise
        if self._owned_http is not None:
            self._client.transport = _OwningTransport(self._client.transport, self._owned_http)
        return self._client

    def __await__(self) -> Generator[Any, None, Client]:
        return self._open().__await__()

    async def __aenter__(self) -> Client:
        return await self._open()

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            if self._client is not None:
                await self._client.aclose()
        finally:  # the http client made here is closed whatever closing the client met
            await self._close_http()

    async def _close_http(self) -> None:
        if self._owned_http is not None:
            await self._owned_http.aclose()


class _OwningTransport:
    """A transport that also closes the http client made for it."""

    def __init__(self, inner: Any, http: httpx.AsyncClient) -> None:
        self.inner = inner
        self.http = http
        self.request = inner.request
        self.stream = inner.stream

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            await self.http.aclose()
