"""The client's plug point: a ``Transport`` is ``request()``, ``stream()`` and ``aclose()``.

One transport per binding (JSON-RPC, HTTP+JSON, gRPC). The ``Client`` drives any of them
through the operation table, so a transport knows how to carry an ``Operation`` and its
params model over its wire and nothing else: it decodes results into parley types and
turns every foreign failure (httpx, SSE, grpc) into an ``A2AError`` at one place.

Transports register a factory under the card's transport name (``register_transport``);
transport selection (``parley.client._selection``) picks them up from here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from parley.protocol import Operation
from parley.types import A2AModel, Event


@dataclass(slots=True)
class ClientCallContext:
    """Per-call facts a transport puts on the wire."""

    headers: dict[str, str] = field(default_factory=dict)
    """Extra HTTP headers (gRPC metadata, lower-cased, for the gRPC transport)."""
    timeout: float | None = None
    """Overall limit of this call in seconds (the ``Client`` enforces it; a transport may
    also pass it on, as a gRPC deadline); ``None``: the ``Timeouts`` limits only."""
    last_event_id: int | None = None
    """Resume a ``resubscribe`` after this event sequence number (``Last-Event-ID``)."""
    extensions: frozenset[str] = frozenset()
    """Extension URIs to activate (``X-A2A-Extensions``)."""
    query: dict[str, str] = field(default_factory=dict)
    """Extra URL query parameters (an API key ``in: query``); HTTP transports only."""


@dataclass(frozen=True, slots=True)
class StreamItem:
    """One event of a stream, with its sequence number when the binding carries one."""

    event: Event
    id: int | None
    """The event's sequence number (the SSE ``id:``); ``None`` if the binding has none."""


class Transport(Protocol):
    """Carries operations of the operation table over one binding."""

    async def request(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> Any:
        """Run a non-streaming operation; returns its result decoded into parley types.

        Raises an ``A2AError`` subclass for every failure, remote or local; a request
        that never reached the agent (no connection) raises ``AgentUnreachableError``,
        which is what makes transport selection fall back to the card's next interface.
        """
        ...

    def stream(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> AsyncIterator[StreamItem]:
        """Run a streaming operation; yields its events in order.

        Raises an ``A2AError`` subclass for every failure; a stream cut before its end
        raises ``StreamInterruptedError`` (a parley client error, see ``_errors``).
        """
        ...

    async def aclose(self) -> None:
        """Release what the transport owns (not an ``http_client`` it was given)."""
        ...


@dataclass(frozen=True, slots=True)
class Timeouts:
    """The client's time limits, in seconds; ``None`` means no limit.

    Waiting for an agent is not an error: a blocking ``message/send`` and a stream may
    stay silent for as long as the agent works, so they get no read limit by default.
    """

    connect: float | None = 10.0
    """Opening a connection (TCP + TLS)."""
    read: float | None = 60.0
    """Waiting for the answer of a quick call (get task, cancel, push configs, card)."""
    wait: float | None = None
    """Waiting on a blocking send or between two events of a stream."""


TransportFactory = Callable[..., Transport]
"""Builds a transport: ``factory(url, http_client, *, timeouts: Timeouts) -> Transport``.

``url`` is the interface URL from the card; ``http_client`` is the caller's
``httpx.AsyncClient`` to share (``None``: the transport makes and owns one; a transport
that does not speak HTTP ignores it). Factories should accept and ignore unknown
keyword options, so that new ones can be added.
"""

_TRANSPORTS: dict[str, TransportFactory] = {}


def register_transport(name: str, factory: TransportFactory) -> None:
    """Make ``factory`` the transport for the card's transport ``name``.

    ``name`` is the card's spelling: ``"JSONRPC"``, ``"GRPC"``, ``"HTTP+JSON"``. A later
    registration replaces an earlier one, so an application may swap in its own.
    """
    _TRANSPORTS[name.upper()] = factory


def transport_factory(name: str) -> TransportFactory | None:
    """The factory registered for ``name``, or ``None``."""
    return _TRANSPORTS.get(name.upper())


def registered_transports() -> tuple[str, ...]:
    """The names with a registered factory, in registration order."""
    return tuple(_TRANSPORTS)
