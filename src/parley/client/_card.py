"""Finding and checking an agent card (spec 5.3, 5.5, 5.6.4).

A card may be v0.3's (``url``, ``preferredTransport``, ``additionalInterfaces``, which
parley's own cards keep beside v1.0's ``supportedInterfaces``) or v1.0's
(``supportedInterfaces`` only): the latter is read into the same ``AgentCard``, its
first interface as ``url``. A card comes from a base URL
(``/.well-known/agent-card.json``, then the older ``/.well-known/agent.json``), from the
full URL of a card, or from a file. A bad card is
refused with ``CardError`` whose ``problems`` name each field and what is wrong with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
import httpx
from pydantic import ValidationError

from parley.client._errors import CardError, NotAnAgentError
from parley.client._transport import Timeouts
from parley.client.transports._http import not_an_agent, refused, translated
from parley.protocol._cards import card_from_v1
from parley.protocol.early import card_from_early, wire
from parley.types import AgentCard

if TYPE_CHECKING:
    from parley.client._card_verify import CardVerifier

_Parser = Callable[[Any, str], AgentCard]

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
"""Where a base URL's card is looked for, in order (the second is the pre-0.3 name)."""
EARLY = "2025-early"
"""The protocol id of the 2025-early dialect, whose card is at ``/.well-known/agent.json``
in its own shape."""


def parse_card(data: bytes | str | dict[str, Any], source: str = "the card") -> AgentCard:
    """Validate a card's JSON; raises ``CardError`` listing every problem found."""
    try:
        raw = json.loads(data) if isinstance(data, bytes | str) else data
    except ValueError as error:
        raise CardError(f"{source} is not JSON: {error}", problems=[str(error)]) from None
    if not isinstance(raw, dict):
        raise CardError(f"{source} is not a JSON object", problems=["expected a JSON object"])
    if is_v1_card(raw):
        raw = card_from_v1(raw)
    try:
        card = AgentCard.model_validate(raw)
    except ValidationError as error:
        problems = _problems(error)
        raise CardError(
            f"{source} is not a valid agent card: " + "; ".join(problems[:5]), problems=problems
        ) from None
    problems = card_problems(card)
    if problems:
        raise CardError(
            f"{source} is not a valid agent card: " + "; ".join(problems), problems=problems
        )
    return card


def parse_early_card(data: bytes | str | dict[str, Any], source: str = "the card") -> AgentCard:
    """Validate a card of the 2025-early dialect (``authentication: {schemes}``) and give
    it as a core ``AgentCard`` whose one interface is JSON-RPC at its ``url``; raises
    ``CardError`` listing every problem found."""
    try:
        raw = json.loads(data) if isinstance(data, bytes | str) else data
        card = wire.AgentCard.model_validate(raw)
    except ValueError as error:
        problems = [str(error)]
        if isinstance(error, ValidationError):
            problems = _problems(error)
        raise CardError(
            f"{source} is not a 2025-early agent card: " + "; ".join(problems[:5]),
            problems=problems,
        ) from None
    return card_from_early(card)


def _problems(error: ValidationError) -> list[str]:
    return [
        f"{'.'.join(str(p) for p in item['loc']) or 'card'}: {item['msg']}"
        for item in error.errors(include_url=False, include_input=False)
    ]


def is_v1_card(raw: dict[str, Any]) -> bool:
    """A card in v1.0's shape: ``supportedInterfaces`` and none of v0.3's ``url`` (as an
    agent that speaks only v1.0 publishes it, v1.0.1 §4.4.1)."""
    return bool(raw.get("supportedInterfaces")) and not raw.get("url")


def card_problems(card: AgentCard) -> list[str]:
    """Rules of spec 5.6 that a well-formed card can still break (MUSTs only)."""
    problems = []
    if not card.url:
        problems.append("url: the card gives no endpoint")
    elif not _absolute(card.url) and card.preferred_transport.upper() != "GRPC":
        problems.append(f"url: {card.url!r} is not an absolute http(s) URL")
    if not card.preferred_transport:
        problems.append("preferredTransport: must name the transport served at url")
    for index, interface in enumerate(card.additional_interfaces or ()):
        if not interface.url:
            problems.append(f"additionalInterfaces.{index}.url: empty")
    return problems


def card_warnings(card: AgentCard) -> list[str]:
    """Advice of spec 5.6 (SHOULDs) the card does not follow; nothing here is fatal."""
    warnings = []
    interfaces = card.additional_interfaces
    if interfaces and not any(
        i.url == card.url and i.transport == card.preferred_transport for i in interfaces
    ):
        warnings.append(
            "additionalInterfaces does not repeat the main url with preferredTransport (5.6.2)"
        )
    urls = [card.url, *(i.url for i in interfaces or ())]
    if any(url.startswith("http://") and not _local(url) for url in urls):
        warnings.append("an interface uses plain http; production agents should use https")
    if card.security and not card.security_schemes:
        warnings.append("security names schemes, but securitySchemes declares none")
    for requirement in card.security or ():
        for name in requirement:
            if name not in (card.security_schemes or {}):
                warnings.append(f"security refers to {name!r}, which securitySchemes lacks")
    return warnings


async def fetch_card(
    source: str,
    http_client: httpx.AsyncClient | None = None,
    *,
    timeouts: Timeouts | None = None,
    headers: dict[str, str] | None = None,
    protocol: str | None = None,
    verifier: CardVerifier | None = None,
) -> AgentCard:
    """The card at ``source``: a base URL, a card URL, or a file path.

    With ``verifier`` the card's signatures are checked under its policy, on the JSON as
    received (``CardError`` when the policy refuses the card).

    With ``protocol="2025-early"`` the card is read in that dialect's shape, from
    ``/.well-known/agent.json`` of a base URL.

    Raises ``CardError`` (no card, or a bad one), ``AgentUnreachableError``,
    ``NotAnAgentError``, ``UnauthenticatedError`` / ``PermissionDeniedError``.
    """
    parse = parse_early_card if protocol == EARLY else parse_card
    if not source.startswith(("http://", "https://")):
        data, where = await _read_file(source)
        return await _checked(data, where, parse, verifier)
    limits = timeouts or Timeouts()
    http = http_client or httpx.AsyncClient()
    urls = card_urls(source)
    if protocol == EARLY and len(urls) > 1:
        urls = urls[1:]
    try:
        for url in urls:
            with translated(url):
                response = await http.get(
                    url,
                    headers=headers,
                    timeout=httpx.Timeout(limits.read, connect=limits.connect),
                    follow_redirects=True,
                )
            if response.status_code == 404 and url != urls[-1]:
                continue
            return await _checked(_card_json(response, url), f"the card at {url}", parse, verifier)
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        if http_client is None:
            await http.aclose()


def card_urls(source: str) -> list[str]:
    """Where to look for the card of ``source``, in order."""
    parts = urlsplit(source)
    if parts.path.endswith(".json"):
        return [source]
    base = source.rstrip("/")
    return [base + path for path in CARD_PATHS]


async def _checked(
    data: Any, where: str, parse: _Parser, verifier: CardVerifier | None
) -> AgentCard:
    if verifier is not None:
        try:
            raw = json.loads(data) if isinstance(data, bytes | str) else data
        except ValueError:
            raw = None  # parse says what is wrong with it
        if isinstance(raw, dict):
            await verifier.verify(raw)
    return parse(data, where)


def _card_json(response: httpx.Response, url: str) -> Any:
    refused(response)
    if response.status_code == 404:
        raise NotAnAgentError(
            f"{url} has no agent card (HTTP 404): is this an A2A agent?", status_code=404
        )
    if response.status_code != 200:
        raise not_an_agent(response, "an agent card")
    try:
        return response.json()
    except ValueError:
        raise not_an_agent(response, "an agent card (the body is not JSON)") from None


async def _read_file(source: str) -> tuple[bytes, str]:
    try:  # in a worker thread: a slow disk or a pipe must not hold up the event loop
        data = await anyio.Path(source).read_bytes()
    except OSError as error:
        raise CardError(f"cannot read the card file {source}: {error.strerror}") from None
    return data, f"the card file {source}"


def _absolute(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _local(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost")
