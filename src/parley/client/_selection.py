"""Choosing the protocol version and transport from the card (spec 5.6.3; v1.0.1 §3.6.3,
§8.3.2), with fallback.

The candidates are the card's ``supportedInterfaces`` (v1.0: each a binding, a URL and a
protocol version), or, on a v0.3 card without them, its main ``url``/``preferredTransport``
and its ``additionalInterfaces`` (all v0.3), restricted to the transports and versions the
client speaks. The newest version comes first (``protocol`` may force one); within a
version, by default the agent's preference orders them (the main URL first, then the
interfaces in card order); with ``use_client_preference`` the client's list does.
``FallbackTransport`` tries them in that order and moves on when one cannot be reached.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

import parley.client.transports  # noqa: F401  (registers the built-in transports)
from parley.client._errors import AgentUnreachableError, ClientError
from parley.client._transport import (
    ClientCallContext,
    StreamItem,
    Timeouts,
    Transport,
    registered_transports,
    transport_factory,
)
from parley.protocol import SUPPORTED_VERSIONS, Operation, major_minor
from parley.protocol._versions import V0_3
from parley.types import A2AModel, AgentCard, AgentInterface

TRANSPORT_NAMES = {
    "jsonrpc": "JSONRPC",
    "grpc": "GRPC",
    "rest": "HTTP+JSON",
    "http+json": "HTTP+JSON",
}
"""Friendly names (as the CLI spells them) to the card's transport names."""


def transport_name(name: str) -> str:
    """The card's spelling of a transport name (``rest`` -> ``HTTP+JSON``)."""
    return TRANSPORT_NAMES.get(name.lower(), name.upper())


@dataclass(frozen=True, slots=True)
class Candidate:
    """An interface the client can use: a binding at a URL in one protocol version."""

    url: str
    transport: str
    """The card's binding name: ``JSONRPC``, ``GRPC``, ``HTTP+JSON``."""
    protocol: str = V0_3
    """``1.0`` or ``0.3``."""
    tenant: str | None = None
    """v1.0: the interface's ``tenant``, sent in every request (v1.0.1 §8.3.2)."""


def declared_interfaces(card: AgentCard) -> list[Candidate]:
    """Every interface the card declares, in the agent's order: its
    ``supportedInterfaces`` (v1.0), or else its v0.3 ``url`` and ``additionalInterfaces``."""
    if card.supported_interfaces:
        return [
            Candidate(
                i.url, transport_name(i.protocol_binding), _version(i.protocol_version), i.tenant
            )
            for i in card.supported_interfaces
        ]
    declared = [AgentInterface(url=card.url, transport=card.preferred_transport)]
    declared += card.additional_interfaces or []
    return [Candidate(i.url, transport_name(i.transport), V0_3) for i in declared]


def _version(text: str) -> str:
    try:
        return major_minor(text) if text else V0_3
    except (IndexError, ValueError):
        return text


def candidate_interfaces(
    card: AgentCard,
    supported: Sequence[str] | None = None,
    *,
    use_client_preference: bool = False,
    protocols: Sequence[str] = SUPPORTED_VERSIONS,
) -> list[Candidate]:
    """The card's interfaces the client can use, best first: the newest protocol version
    of ``protocols`` both sides speak first (v1.0.1 §3.6.3, §8.3.2), then by the agent's
    order (spec 5.6.3), or by ``supported``'s with ``use_client_preference``."""
    wanted = [transport_name(n) for n in (supported or registered_transports())]
    usable: list[Candidate] = []
    for candidate in declared_interfaces(card):
        usable_here = candidate.transport in wanted and candidate.protocol in protocols
        if usable_here and candidate not in usable:
            usable.append(candidate)
    if use_client_preference:
        usable.sort(key=lambda candidate: wanted.index(candidate.transport))
    usable.sort(key=lambda candidate: protocols.index(candidate.protocol))
    return usable


def no_interface_message(
    card: AgentCard, supported: Sequence[str] | None, protocols: Sequence[str] = SUPPORTED_VERSIONS
) -> str:
    declared = declared_interfaces(card)
    versions = sorted({candidate.protocol for candidate in declared})
    if not set(versions) & set(protocols):
        return (
            f"the agent speaks only A2A {', '.join(versions)}; this client speaks "
            f"{', '.join(protocols)}"
        )
    offered = ", ".join(sorted({c.transport for c in declared if c.protocol in protocols}))
    wanted = ", ".join(transport_name(n) for n in (supported or registered_transports()))
    return f"the agent offers {offered}; this client uses {wanted}"


class FallbackTransport:
    """Sends each call over the first candidate that can be reached.

    A candidate whose transport cannot be built (an optional extra not installed) or
    whose URL cannot be reached (``AgentUnreachableError`` before any answer) is
    dropped and the next one tried; once a candidate answers, it is kept.
    """

    def __init__(
        self,
        candidates: Sequence[Candidate],
        http_client: httpx.AsyncClient | None = None,
        *,
        timeouts: Timeouts | None = None,
        tls: Any = None,
    ) -> None:
        if not candidates:
            raise ClientError("no interface of the agent can be used")
        self.candidates = list(candidates)
        self.http_client = http_client
        self.tls = tls
        """``ClientTLS`` for transports that make their own connections (gRPC)."""
        self.timeouts = timeouts or Timeouts()
        self._transports: dict[int, Transport] = {}
        self._index = 0
        self._settled = False

    @property
    def interface(self) -> Candidate:
        """The interface in use (or to be tried next)."""
        return self.candidates[self._index]

    @property
    def protocol(self) -> str:
        """The A2A version of the interface in use."""
        return self.interface.protocol

    async def request(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> Any:
        while True:
            transport = self._current()
            try:
                result = await transport.request(operation, params, context)
            except AgentUnreachableError:
                if not self._next():
                    raise
                continue
            self._settled = True
            return result

    async def stream(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> AsyncIterator[StreamItem]:
        while True:
            transport = self._current()
            items = transport.stream(operation, params, context)
            try:
                first = await anext(items, None)
            except AgentUnreachableError:
                if not self._next():
                    raise
                continue
            self._settled = True
            if first is None:
                return
            yield first
            async for item in items:
                yield item
            return

    def _current(self) -> Transport:
        while self._index not in self._transports:
            interface = self.candidates[self._index]
            factory = transport_factory(interface.transport)
            try:
                if factory is None:
                    raise ClientError(f"no {interface.transport} transport is installed")
                self._transports[self._index] = factory(
                    interface.url,
                    self.http_client,
                    timeouts=self.timeouts,
                    protocol=interface.protocol,
                    tenant=interface.tenant,
                    client_tls=self.tls,
                )
            except (ImportError, ClientError):
                if not self._next():
                    raise
        return self._transports[self._index]

    def _next(self) -> bool:
        if self._settled or self._index + 1 >= len(self.candidates):
            return False
        self._index += 1
        return True

    async def aclose(self) -> None:
        """Close every transport built, the ones dropped too; one that fails to close
        does not keep the others open (its error is raised after they are closed)."""
        async with contextlib.AsyncExitStack() as closing:
            for transport in self._transports.values():
                closing.push_async_callback(transport.aclose)
