"""What the page shows of a card: the card as parley reads it, the JSON as received, the
signature status, the checks, the interfaces it can talk to and the credentials its
security schemes ask for."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from parley import check
from parley.client import card_warnings
from parley.types import (
    AgentCard,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    SecurityScheme,
)

if TYPE_CHECKING:
    from parley.inspect._session import Connection

CHECKS_TIMEOUT = 60.0
"""Seconds the card checks may take in all (each is bounded on its own too)."""


def agent_base(url: str) -> str:
    """The agent's base URL: ``url``, less the card's path when it names the card."""
    for path in ("/.well-known/agent-card.json", "/.well-known/agent.json"):
        if url.endswith(path):
            return url.removesuffix(path)
    return url


def card_view(connection: Connection) -> dict[str, Any]:
    """The card of an opened connection, as the page renders it."""
    card = connection.card
    assert card is not None
    return {
        "card": json.loads(card.to_json()),
        "raw": connection.raw_card,
        "signature": connection.signature,
        "advice": card_advice(card),
        "options": connection.options(),
        "schemes": schemes(card),
        "pushUrl": f"/push/{connection.id}",
    }


def card_advice(card: AgentCard) -> list[dict[str, str]]:
    """Advice the card does not follow, seen in the card alone (a card that breaks a
    MUST is refused before it gets here); ``conformance`` runs the full checks."""
    return [{"level": "warning", "text": text} for text in card_warnings(card)]


async def conformance(connection: Connection) -> dict[str, Any]:
    """The card checks of ``parley check`` (``parley.check``, area ``card``) run on the
    agent, with the connection's credentials; its report as JSON."""
    report = await check.run(
        agent_base(connection.url),
        interceptors=connection.interceptors(),
        only=["card"],
        overall_timeout=CHECKS_TIMEOUT,
    )
    return check.as_json(report)


def schemes(card: AgentCard) -> list[dict[str, Any]]:
    """The card's security schemes, each with what to ask the person for, and how the
    card's ``security`` asks for it: ``required`` (in every alternative), ``one of``
    (in some), or ``None``."""
    alternatives = [set(requirement) for requirement in card.security or ()]
    found = []
    for name, scheme in (card.security_schemes or {}).items():
        kind, label = _asks(scheme)
        needed = [name in alternative for alternative in alternatives]
        asked = "required" if needed and all(needed) else "one of" if any(needed) else None
        found.append({"name": name, "kind": kind, "label": label, "asked": asked})
    return found


def _asks(scheme: SecurityScheme) -> tuple[str, str]:
    """The kind of credential a scheme takes, and how to ask for it."""
    if isinstance(scheme, APIKeySecurityScheme):
        return "apiKey", f"API key (sent in {scheme.in_} {scheme.name})"
    if isinstance(scheme, HTTPAuthSecurityScheme) and scheme.scheme.lower() == "basic":
        return "basic", "User name and password (HTTP basic)"
    if isinstance(scheme, HTTPAuthSecurityScheme):
        return "bearer", f"{scheme.scheme.capitalize()} token"
    if isinstance(scheme, MutualTLSSecurityScheme):
        return "mtls", "A client certificate (mutual TLS), which the inspector does not send"
    return "bearer", "Access token (sent as a bearer token)"
