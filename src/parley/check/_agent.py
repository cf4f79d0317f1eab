"""The agent under check: its card as served, the versions and bindings it offers, and
the means to reach it (an HTTP client, credentials).

The card is read as any client reads it: ``/.well-known/agent-card.json``, once as a
v0.3 client asks for it (no ``A2A-Version``) and once as a v1.0 client does. The
versions and bindings offered are the card's ``supportedInterfaces`` (v1.0) or its
``url`` and ``additionalInterfaces`` (v0.3); the 2025-early JSON-RPC dialect is offered
when ``/.well-known/agent.json`` serves that dialect's card (with its ``authentication``
member), or when asked for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from parley.check._model import BINDINGS, EARLY, V0_3, V1_0, VERSIONS
from parley.check._receiver import Receiver
from parley.client import (
    CardError,
    ClientCall,
    ClientCallContext,
    ClientInterceptor,
    ClientTLS,
    parse_card,
    transport_name,
)
from parley.protocol import BY_NAME, major_minor
from parley.types import AgentCard

CARD_PATH = "/.well-known/agent-card.json"
EARLY_CARD_PATH = "/.well-known/agent.json"


@dataclass(frozen=True, slots=True)
class Surface:
    """One way in: a protocol version over a binding at a URL."""

    version: str
    binding: str
    url: str
    tenant: str | None = None


@dataclass
class Agent:
    """What every check of one run shares."""

    base_url: str
    http: httpx.AsyncClient
    interceptors: list[ClientInterceptor] = field(default_factory=list)
    tls: ClientTLS | None = None
    call_timeout: float = 10.0
    """Seconds one request may take."""
    webhook: str = "https://example.com/a2a-check/webhook"
    """Where the push configs the checks set point (never called: their tasks have
    ended); an agent that refuses it gets the push checks skipped."""
    receiver: Receiver | None = None
    """Where push notifications can be received, when one listens."""
    card_response: httpx.Response | None = None
    """The card as served to a request without ``A2A-Version``."""
    card_json: dict[str, Any] | None = None
    card_v1_json: dict[str, Any] | None = None
    """The card as served to a request with ``A2A-Version: 1.0``."""
    card: AgentCard | None = None
    card_problem: str = ""
    early_card_json: dict[str, Any] | None = None
    surfaces: list[Surface] = field(default_factory=list)
    _auth: tuple[dict[str, str], dict[str, str]] | None = None

    @property
    def versions(self) -> list[str]:
        offered = {s.version for s in self.surfaces}
        return [v for v in VERSIONS if v in offered]

    @property
    def has_credentials(self) -> bool:
        return bool(self.interceptors) or (
            self.tls is not None and self.tls.certificate is not None
        )

    def capability(self, name: str) -> bool:
        """Whether the card declares ``capabilities.<name>`` true (v0.3 spells the
        extended card ``supportsAuthenticatedExtendedCard``, beside the capabilities)."""
        v03 = self.card_json or {}
        if name == "extendedAgentCard" and v03.get("supportsAuthenticatedExtendedCard"):
            return True
        return any(
            ((raw or {}).get("capabilities") or {}).get(name)
            for raw in (self.card_v1_json, self.card_json)
        )

    def declares_security(self) -> bool:
        return any(
            (raw or {}).get(key)
            for raw in (self.card_json, self.card_v1_json)
            for key in ("security", "securityRequirements")
        )

    async def auth(self) -> tuple[dict[str, str], dict[str, str]]:
        """The headers and query parameters the credentials add to a request."""
        if self._auth is None:
            context = ClientCallContext()
            call = ClientCall(BY_NAME["get_task"], None, context, self.card)
            for interceptor in self.interceptors:
                await interceptor.before(call)
            self._auth = (dict(context.headers), dict(context.query))
        return self._auth

    async def read_card(self, versions: list[str] | None, bindings: list[str] | None) -> None:
        """Fetch the card (both versions' forms) and work out the surfaces offered,
        restricted to ``versions`` and ``bindings`` when given."""
        base = self.base_url.rstrip("/")
        self.card_response = await self.http.get(base + CARD_PATH, timeout=self.call_timeout)
        self.card_json = _json_object(self.card_response)
        v1 = await self.http.get(
            base + CARD_PATH, headers={"A2A-Version": V1_0}, timeout=self.call_timeout
        )
        self.card_v1_json = _json_object(v1)
        if self.card_json is not None:
            try:
                self.card = parse_card(self.card_json, f"the card at {base}{CARD_PATH}")
            except CardError as error:
                self.card_problem = error.message
        if versions is None or EARLY in versions:
            early = await self.http.get(base + EARLY_CARD_PATH, timeout=self.call_timeout)
            found = _json_object(early)
            if found is not None and ("authentication" in found or versions is not None):
                self.early_card_json = found
        self.surfaces = _surfaces(self, versions, bindings)


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    if response.status_code != 200:
        return None
    try:
        found = json.loads(response.content)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _surfaces(
    agent: Agent, versions: list[str] | None, bindings: list[str] | None
) -> list[Surface]:
    unique: list[Surface] = []
    for surface in _declared(agent):
        if surface.binding not in BINDINGS or surface.version not in VERSIONS:
            continue
        if versions is not None and surface.version not in versions:
            continue
        if bindings is not None and surface.binding not in bindings:
            continue
        if not any((s.version, s.binding) == (surface.version, surface.binding) for s in unique):
            unique.append(surface)
    return unique


def _declared(agent: Agent) -> list[Surface]:
    """Every interface of the card (both versions' forms), in the card's order."""
    found: list[Surface] = []
    for raw in (agent.card_v1_json, agent.card_json):
        for interface in (raw or {}).get("supportedInterfaces") or ():
            if isinstance(interface, dict):
                version = _version(str(interface.get("protocolVersion") or V0_3))
                binding = transport_name(str(interface.get("protocolBinding") or ""))
                tenant = interface.get("tenant") or None
                found.append(Surface(version, binding, str(interface.get("url") or ""), tenant))
    raw = agent.card_json or {}
    if raw.get("url"):
        v03 = [{"url": raw["url"], "transport": raw.get("preferredTransport") or "JSONRPC"}]
        for interface in [*v03, *(raw.get("additionalInterfaces") or ())]:
            if isinstance(interface, dict):
                binding = transport_name(str(interface.get("transport") or ""))
                found.append(Surface(V0_3, binding, str(interface.get("url") or "")))
    if agent.early_card_json is not None and agent.early_card_json.get("url"):
        found.append(Surface(EARLY, "JSONRPC", str(agent.early_card_json["url"])))
    return found


def _version(text: str) -> str:
    try:
        return major_minor(text)
    except (IndexError, ValueError):
        return text
