"""The agent card: an agent's self-description, served at a well-known URL (spec 5.5)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from parley.types._base import A2AModel
from parley.types._security import SecurityScheme


class TransportProtocol(StrEnum):
    """The transports the spec defines. Cards may name others, so fields stay ``str``."""

    jsonrpc = "JSONRPC"
    grpc = "GRPC"
    http_json = "HTTP+JSON"


class AgentProvider(A2AModel):
    organization: str
    url: str


class AgentExtension(A2AModel):
    uri: str
    """The URI that identifies the extension."""
    description: str | None = None
    """How this agent uses the extension."""
    required: bool | None = None
    """True: a client must understand the extension to talk to this agent."""
    params: dict[str, Any] | None = None
    """Extension-specific configuration."""


class AgentCapabilities(A2AModel):
    streaming: bool | None = None
    """The agent supports ``message/stream`` and ``tasks/resubscribe`` (SSE)."""
    push_notifications: bool | None = None
    state_transition_history: bool | None = None
    """The agent keeps a history of a task's state transitions."""
    extensions: list[AgentExtension] | None = None
    extended_agent_card: bool | None = None
    """v1.0's place for ``supportsAuthenticatedExtendedCard``; parley sets both."""


class AgentSkill(A2AModel):
    id: str
    name: str
    description: str
    tags: list[str]
    examples: list[str] | None = None
    """Example prompts this skill handles."""
    input_modes: list[str] | None = None
    """Accepted input MIME types, overriding the card's defaults."""
    output_modes: list[str] | None = None
    """Produced output MIME types, overriding the card's defaults."""
    security: list[dict[str, list[str]]] | None = None
    """Security requirements for this skill; same shape as ``AgentCard.security``."""


class AgentInterface(A2AModel):
    url: str
    transport: str
    """A ``TransportProtocol`` value, or another transport's name."""


class ProtocolInterface(A2AModel):
    """One entry of ``supportedInterfaces`` (A2A v1.0): a binding at a URL in one
    protocol version. parley lists it beside the v0.3 fields, so one card serves both."""

    url: str
    protocol_binding: str
    """``JSONRPC``, ``GRPC`` or ``HTTP+JSON``."""
    protocol_version: str
    """``Major.Minor``: ``1.0`` or ``0.3``."""
    tenant: str | None = None


class AgentCardSignature(A2AModel):
    """A JWS (RFC 7515, JSON serialisation) over the card."""

    protected: str
    """Base64url-encoded JSON of the protected JWS header."""
    signature: str
    """Base64url-encoded signature."""
    header: dict[str, Any] | None = None
    """Unprotected JWS header values."""


class AgentCard(A2AModel):
    name: str
    description: str
    url: str
    """Endpoint of the preferred transport."""
    version: str
    """The agent's own version, in the provider's format."""
    capabilities: AgentCapabilities
    default_input_modes: list[str]
    """Input MIME types accepted by every skill that does not say otherwise."""
    default_output_modes: list[str]
    """Output MIME types produced by every skill that does not say otherwise."""
    skills: list[AgentSkill]
    protocol_version: str = "0.3.0"
    """The A2A protocol version this agent speaks."""
    preferred_transport: str = "JSONRPC"
    """Transport available at ``url``; a ``TransportProtocol`` value or another name."""
    additional_interfaces: list[AgentInterface] | None = None
    """Other (transport, URL) pairs serving the same agent."""
    provider: AgentProvider | None = None
    icon_url: str | None = None
    documentation_url: str | None = None
    security_schemes: dict[str, SecurityScheme] | None = None
    """Available schemes by name; the names are what ``security`` refers to."""
    security: list[dict[str, list[str]]] | None = None
    """Requirements: any one object of the list, every scheme in it (name -> scopes)."""
    supports_authenticated_extended_card: bool | None = None
    """An authenticated client can fetch a fuller card (``agent/getAuthenticatedExtendedCard``)."""
    signatures: list[AgentCardSignature] | None = None
    supported_interfaces: list[ProtocolInterface] | None = None
    """v1.0: every binding and protocol version the agent serves (spec v1.0.1 §8.3)."""
