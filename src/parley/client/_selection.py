"""Choosing the transport from the card (spec 5.6.3), with fallback.

The candidates are the card's main ``url``/``preferredTransport`` and its
``additionalInterfaces``, each at its own URL, restricted to the transports the client
supports. By default the agent's preference orders them (the main URL first, then the
interfaces in card order); with ``use_client_preference`` the client's list does.
``FallbackTransport`` tries them in that order and moves on when one cannot be reached.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
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
from parley.protocol import Operation
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


def candidate_interfaces(
    card: AgentCard,
    supported: Sequence[str] | None = None,
    *,
    use_client_preference: bool = False,
) -> list[AgentInterface]:
    """The card's interfaces the client can use, best first (spec 5.6.3)."""
    wanted = [transport_name(n) for n in (supported or registered_transports())]
    declared = [AgentInterface(url=card.url, transport=card.preferred_transport)]
    declared += card.additional_interfaces or []
    usable: list[AgentInterface] = []
    for interface in declared:
        name = transport_name(interface.transport)
        if name in wanted and all((u.url, u.transport) != (interface.url, name) for u in usable):
            usable.append(AgentInterface(url=interface.url, transport=name))
    if use_client_preference:
        usable.sort(key=lambda interface: wanted.index(interface.transport))
    return usable


def no_interface_message(card: AgentCard, supported: Sequence[str] | None) -> str:
    offered = ", ".join(
        sorted({card.preferred_transport, *(i.transport for i in card.additional_interfaces or ())})
    )
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
        candidates: Sequence[AgentInterface],
        http_client: httpx.AsyncClient | None = None,
        *,
        timeouts: Timeouts | None = None,
    ) -> None:
        if not candidates:
            raise ClientError("no interface of the agent can be used")
        self.candidates = list(candidates)
        self.http_client = http_client
        self.timeouts = timeouts or Timeouts()
        self._transports: dict[int, Transport] = {}
        self._index = 0
        self._settled = False

    @property
    def interface(self) -> AgentInterface:
        """The interface in use (or to be tried next)."""
        return self.candidates[self._index]

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
                    interface.url, self.http_client, timeouts=self.timeouts
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
        for transport in self._transports.values():
            await transport.aclose()
