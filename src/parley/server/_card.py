"""The public agent card: checked when the app starts, rendered for each address.

A card whose ``url`` is left empty is completed by parley from the address a request
really came to (``Host`` and the server's own scheme, or ``X-Forwarded-Proto`` /
``X-Forwarded-Host`` from a trusted proxy, see ``TrustedProxies``), so the card never
advertises an address nobody can reach. ``additionalInterfaces`` left empty is filled
with every binding the app serves, and ``supportedInterfaces`` (A2A v1.0, v1.0.1 §8.3)
left empty with each of them twice: ``protocolVersion`` 1.0 first, then 0.3, at the same
URLs (one server speaks both). A v0.3 client ignores the field; a v1.0 client finds its
version there; the card stays valid v0.3. A request asking for v1.0 (``A2A-Version``) is
given the card in v1.0's own shape instead (``CardPublisher``'s ``forms``), signed over
that shape.

A binding's *target* is where the app serves it: an absolute URL, a path on the HTTP
server (``/`` for JSON-RPC, ``""`` for REST's ``/v1/...``), or ``:PORT`` for gRPC, which
listens on its own port of the same host (published as ``host:PORT``, the target form
gRPC clients, the official SDK's included, dial).
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from pydantic_core import to_json

from parley.protocol import SUPPORTED_VERSIONS
from parley.server.agent._card_error import CardError
from parley.server.auth._keys import SigningKeys
from parley.types import (
    AgentCard,
    AgentCardSignature,
    AgentInterface,
    ProtocolInterface,
    TransportProtocol,
)


def binding_path(card: AgentCard, default: str = "/") -> str:
    """The path the preferred binding is served at, taken from the card's ``url``."""
    if not card.url:
        return default
    return urlsplit(card.url).path or "/"


def resolve_target(target: str, base: str) -> str:
    """``target`` completed with ``base`` (``scheme://host[:port][/root]``, may be empty)."""
    if "://" in target or not base:
        return target
    if target.startswith(":"):
        parts = urlsplit(base)
        host = parts.hostname or "localhost"
        return f"[{host}]{target}" if ":" in host else f"{host}{target}"
    parts = urlsplit(base)
    return f"{parts.scheme}://{parts.netloc}{target}"


def check_card(
    card: AgentCard,
    served: Mapping[str, str],
    *,
    extended_card: bool,
) -> None:
    """Refuse a card that promises what the server does not do.

    ``served`` maps each transport the app mounts to its path (or absolute URL).
    Raises ``CardError`` naming the bad field.
    """
    if card.preferred_transport not in served:
        raise CardError(
            f"preferredTransport is {card.preferred_transport!r}, but this server serves "
            f"only {', '.join(sorted(served))}"
        )
    for index, interface in enumerate(card.additional_interfaces or ()):
        if interface.transport not in served:
            raise CardError(
                f"additionalInterfaces[{index}].transport is {interface.transport!r}, "
                f"which this server does not serve (it serves {', '.join(sorted(served))})"
            )
        if card.url and not _same_place(interface.url, served[interface.transport]):
            raise CardError(
                f"additionalInterfaces[{index}].url is {interface.url!r}, but "
                f"{interface.transport} is served at {served[interface.transport]!r}"
            )
    if card.supports_authenticated_extended_card and not extended_card:
        raise CardError("supportsAuthenticatedExtendedCard is true, but no extended card was given")
    if extended_card and not card.supports_authenticated_extended_card:
        raise CardError(
            "an extended card was given, but supportsAuthenticatedExtendedCard is not true"
        )


def _same_place(declared: str, served: str) -> bool:
    if served.startswith(":"):  # a gRPC port on a host not known yet
        return served == ":0" or declared.rstrip("/").endswith(served)
    if "://" not in served and (served.startswith("/") or not served):
        return (urlsplit(declared).path or "/").rstrip("/") == served.rstrip("/")
    if "://" not in served:  # host:port of gRPC; a card may spell it with a scheme
        return declared.split("://", 1)[-1].rstrip("/") == served
    return declared.rstrip("/") == served.rstrip("/")


class RenderedCard:
    """A card's JSON as served and its entity tag (RFC 9110 §8.8.3), made from those bytes."""

    __slots__ = ("body", "etag")

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.etag = entity_tag(body)


def entity_tag(body: bytes) -> bytes:
    """The strong ETag of a response body: a digest of its bytes, quoted."""
    return b'"%s"' % hashlib.sha256(body).hexdigest()[:32].encode()


CardForm = Callable[[dict[str, Any]], dict[str, Any]]
"""A core card's wire JSON -> the JSON of the card in another version's shape."""


class CardPublisher:
    """Renders the card's JSON for the base URL of each request and the A2A version it
    asks for, cached per base URL and version.

    ``forms`` maps each version whose card has a shape of its own (v1.0) to the function
    that gives it (``card_json_v1``); any other version gets the core card, v0.3's shape
    with v1.0's ``supportedInterfaces`` beside it. ``sign`` signs each version's card
    over that version's own JSON."""

    def __init__(
        self,
        card: AgentCard,
        served: Mapping[str, str],
        sign: CardSigner | None = None,
        forms: Mapping[str, CardForm] | None = None,
    ) -> None:
        self.card = card
        self.served = dict(served)
        self.sign = sign
        """Signs each rendering (``card_signer``), when the card is to be signed."""
        self.forms = dict(forms or {})
        self._rendered: dict[tuple[str, str | None], RenderedCard] = {}
        self._fixed: dict[str | None, RenderedCard] = {}
        self.last_base: str | None = None
        """The base URL the card was last rendered for over HTTP: a gRPC call, which
        does not say where the client reached the app, completes the card with it (the
        client found the gRPC port in that card)."""
        self._fix()

    def _fix(self) -> None:
        """Render the card once per form now: a card with a fixed url is served as
        rendered here, and one the v1.0 proto cannot hold fails at start-up."""
        card = self.card
        self._rendered.clear()
        self._fixed = {}
        origin = urlsplit(card.url)
        base = f"{origin.scheme}://{origin.netloc}" if card.url else "http://localhost"
        rendered = {
            version: RenderedCard(self._json(self.for_base(base), version))
            for version in (None, *self.forms)
        }
        if card.url:
            self._fixed = rendered

    def serve(self, transport: str, target: str) -> None:
        """Publish ``transport`` at ``target`` from now on (e.g. once a port is known)."""
        self.served[transport] = target
        self._fix()

    def for_base(self, base: str) -> AgentCard:
        """The card with every relative binding path completed with ``base``."""
        return self.complete(self.card, base)

    def complete(self, card: AgentCard, base: str | None) -> AgentCard:
        """``card`` (the public card or an extended one) with its ``url``,
        ``additionalInterfaces`` and ``supportedInterfaces`` filled in from the bindings
        this app serves, for a client that reached it at ``base`` (``None``: at the card's
        own ``url``); ``capabilities.extendedAgentCard`` follows
        ``supportsAuthenticatedExtendedCard``."""
        card = _with_v1_capabilities(card)
        if card.url and card.additional_interfaces and card.supported_interfaces:
            return card
        if base is None:
            origin = urlsplit(card.url or self.card.url)
            if origin.netloc:
                base = f"{origin.scheme}://{origin.netloc}"
            elif self.last_base is not None:
                base = self.last_base
            else:
                return card  # nothing to complete relative paths with
        urls = {transport: _complete(target, base) for transport, target in self.served.items()}
        update: dict[str, Any] = {}
        if card.url:
            urls[card.preferred_transport] = card.url
        else:
            update["url"] = urls[card.preferred_transport]
        ranked = sorted(urls.items(), key=lambda item: _rank(item[0], card.preferred_transport))
        if not card.additional_interfaces:
            update["additional_interfaces"] = [
                AgentInterface(url=url, transport=transport) for transport, url in ranked
            ]
        if not card.supported_interfaces:
            update["supported_interfaces"] = [
                ProtocolInterface(url=url, protocol_binding=transport, protocol_version=version)
                for version in SUPPORTED_VERSIONS
                for transport, url in ranked
            ]
        return card.model_copy(update=update)

    def render(self, scope: Mapping[str, Any], version: str | None = None) -> RenderedCard:
        """The card for the request of ``scope``, in the shape of ``version`` (the A2A
        version it asks for; ``None``: the core card, v0.3's shape)."""
        form = version if version in self.forms else None
        fixed = self._fixed.get(form)
        if fixed is not None:
            return fixed
        base = self.last_base = request_base(scope)
        rendered = self._rendered.get((base, form))
        if rendered is None:
            if len(self._rendered) > 64:  # a client can send any Host; keep the cache small
                self._rendered.clear()
            card = self.for_base(base)
            rendered = self._rendered[base, form] = RenderedCard(self._json(card, form))
        return rendered

    def signed(self, card: AgentCard, version: str | None = None) -> AgentCard:
        """``card`` with its signature over the JSON of ``version``'s card, when the app
        signs its cards."""
        if self.sign is None:
            return card
        wire = card.to_wire()
        form = self.forms.get(version) if version is not None else None
        # v0.3's card is also read, by v1.0 readers that ask no version, into v1.0's
        # shape: it is signed over that too
        shapes = (
            [form(wire)] if form is not None else [wire, *(f(wire) for f in self.forms.values())]
        )
        signatures = [*(card.signatures or []), *self.sign(shapes)]
        return card.model_copy(update={"signatures": signatures})

    def _json(self, card: AgentCard, version: str | None) -> bytes:
        # signed once per rendering: the renderings are cached (per base URL and version)
        signed = self.signed(card, version)
        form = self.forms.get(version) if version is not None else None
        data: bytes = signed.to_json() if form is None else to_json(form(signed.to_wire()))
        return data


CardSigner = Callable[[Sequence[Mapping[str, Any]]], list[AgentCardSignature]]
"""Signs a card given as its JSON in one or more shapes (``signatures`` left out of
what is signed): a signature per distinct canonical form."""


def card_signer(keys: SigningKeys) -> CardSigner:
    """Signs a card with the current key of ``keys`` (see
    ``parley.protocol._card_signing``: a JWS over each canonical form of the card's JSON,
    its ``kid`` naming the key, which ``/.well-known/jwks.json`` publishes)."""
    from parley.protocol._card_signing import sign_card_forms

    def sign(shapes: Sequence[Mapping[str, Any]]) -> list[AgentCardSignature]:
        key = keys.current
        return sign_card_forms(shapes, key.private_key, key.kid, key.algorithm)

    return sign


def _complete(target: str, base: str) -> str:
    if "://" in target:
        return target
    if target.startswith(":"):
        return resolve_target(target, base)
    return base.rstrip("/") + target if target else base


def _rank(transport: str, preferred: str = "") -> tuple[bool, int]:
    order = [TransportProtocol.jsonrpc, TransportProtocol.grpc, TransportProtocol.http_json]
    index = order.index(transport) if transport in order else len(order)  # type: ignore[arg-type]
    return transport != preferred, index


def _with_v1_capabilities(card: AgentCard) -> AgentCard:
    """The card with v1.0's ``capabilities.extendedAgentCard`` beside v0.3's flag."""
    extended = card.supports_authenticated_extended_card or None
    if card.capabilities.extended_agent_card == extended:
        return card
    capabilities = card.capabilities.model_copy(update={"extended_agent_card": extended})
    return card.model_copy(update={"capabilities": capabilities})


def request_base(scope: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> str:
    """``scheme://host[:port]`` plus mount path, as the client reached this server
    (``X-Forwarded-*`` only when ``TrustedProxies`` marked the scope as forwarded).

    ``headers``: the request's headers already decoded (lower-case names), if at hand.
    """
    if headers is None:
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
    host = headers.get("host")
    # Every request asks, and nearly all name the same host: made once per form. A local
    # client is a trusted proxy by default, but its requests seldom say they were
    # forwarded: only those that do are keyed by what they say.
    if scope.get(FORWARDED) and ("x-forwarded-host" in headers or "x-forwarded-proto" in headers):
        proto = headers.get("x-forwarded-proto")
        forwarded_host = headers.get("x-forwarded-host")
        key: tuple[Any, ...] = (
            scope.get("scheme"),
            host,
            scope.get("root_path"),
            proto,
            forwarded_host,
        )
    else:
        proto = forwarded_host = None
        key = (scope.get("scheme"), host, scope.get("root_path"))
    base = _bases.get(key)
    if base is None:
        named = _first(forwarded_host) or _first(host)
        base = _base(scope, _first(proto), named)
        if named:  # without a Host header the base is the socket's, not the key's
            if len(_bases) >= 64:  # the headers are the client's to choose
                _bases.clear()
            _bases[key] = base
    return base


_bases: dict[tuple[Any, ...], str] = {}
"""``request_base`` by the request's scheme, Host header, mount path and, when it says it
was forwarded by a trusted proxy, its ``X-Forwarded-Proto`` and ``X-Forwarded-Host``."""


def _base(scope: Mapping[str, Any], scheme: str | None, host: str | None) -> str:
    scheme = scheme or scope.get("scheme", "http")
    if not host:
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scheme}://{host}{scope.get('root_path', '')}"


def _first(value: str | None) -> str | None:
    if not value:
        return None
    return value.split(",")[0].strip() or None


FORWARDED = "parley.forwarded"
"""Scope key set by the app when the request came from a trusted proxy."""


class TrustedProxies:
    """The addresses whose ``X-Forwarded-Proto``/``X-Forwarded-Host`` are believed, as
    uvicorn's ``--forwarded-allow-ips``: IPs and networks, comma-separated or a list;
    ``"*"`` trusts every client. ``None``: ``$FORWARDED_ALLOW_IPS``, else ``127.0.0.1``."""

    def __init__(self, allowed: str | Sequence[str] | None = None) -> None:
        if allowed is None:
            allowed = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
        items = allowed.split(",") if isinstance(allowed, str) else allowed
        names = [item.strip() for item in items if item.strip()]
        self.everyone = "*" in names
        self.networks = [ipaddress.ip_network(name, strict=False) for name in names if name != "*"]
        self._decided: dict[Any, bool] = {}

    def trusts(self, client: Sequence[Any] | None) -> bool:
        if self.everyone:
            return True
        if not client:
            return False
        host = client[0]  # a str (ASGI); looked up as given, every request asks
        decided = self._decided.get(host)
        if decided is None:
            decided = self._match(str(host))
            if len(self._decided) > 1024:
                self._decided.clear()
            self._decided[host] = decided
        return decided

    def _match(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)
