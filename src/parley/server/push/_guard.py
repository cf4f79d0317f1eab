"""The guard against server-side request forgery: where an agent may POST notifications.

A push notification config names a URL chosen by whoever calls the agent, and the agent
POSTs to it from inside its own network. Left unchecked, that lets any caller make the
agent reach its cloud metadata service (169.254.169.254), an admin port on localhost or a
database on the private network. So by default a webhook must be ``https`` and every
address its host resolves to must be public: loopback, private, link-local, multicast,
reserved, unspecified and shared (carrier-grade NAT) ranges are refused, for IPv4 and
IPv6, including IPv4 addresses wrapped in IPv6 (``::ffff:127.0.0.1``, 6to4).

The check runs twice. When the config is set (``check_url``), so the caller learns at once.
And when connecting (``GuardedTransport``): the transport resolves the host itself, checks
the addresses, and connects to the very address it checked, so DNS that answers
differently the second time (rebinding) or a redirect to another host cannot reach a
refused address. TLS still verifies the certificate against the URL's host name.

Chosen ranges can be allowed (``WebhookGuard(allow=["10.0.0.0/8"])``, ``parley serve
--allow-push-to CIDR``); plain ``http`` is allowed to addresses in those ranges only.
"""

from __future__ import annotations

import contextvars
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import anyio
import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""``(host, port) -> addresses``: how host names are resolved (the system's by default)."""

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SHARED = ipaddress.ip_network("100.64.0.0/10")


class WebhookRefused(Exception):
    """A webhook URL, or the address it resolves to, is not one the agent may POST to.

    The message says which address was refused and why; it is safe to show the caller.
    """


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives for ``host`` (A and AAAA records)."""
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise WebhookRefused(f"the host name {host!r} does not resolve ({exc})") from None
    return [str(info[4][0]) for info in infos]


class WebhookGuard:
    """Decides which webhook URLs and addresses the agent may POST notifications to.

    ``allow`` lists CIDR ranges (``"10.0.0.0/8"``, ``"127.0.0.1/32"``, ``"::1/128"``)
    that are allowed although not public, with plain ``http`` too. ``resolver`` resolves
    host names (tests and special set-ups pass their own).
    """

    def __init__(
        self, allow: Iterable[str | IPNetwork] = (), *, resolver: Resolver = system_resolver
    ) -> None:
        self.allow: tuple[IPNetwork, ...] = tuple(
            ipaddress.ip_network(network, strict=False) if isinstance(network, str) else network
            for network in allow
        )
        self.resolver = resolver

    def refusal(self, address: IPAddress, *, https: bool) -> str | None:
        """Why the agent may not connect to ``address`` (``None`` when it may)."""
        if any(address in network for network in self.allow):
            return None
        if not https:
            return (
                f"plain http is allowed only to addresses in an allowed range "
                f"(--allow-push-to), and {address} is not in one"
            )
        kind = address_kind(address)
        if kind is None:
            return None
        return f"{address} is a {kind} address"

    async def check_url(self, url: str) -> None:
        """Refuse ``url`` unless it is ``https`` (or ``http`` to an allowed range) and
        every address its host resolves to may be reached. Raises ``WebhookRefused``."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError) as exc:
            raise WebhookRefused(f"{url!r} is not a valid URL ({exc})") from None
        if parsed.scheme not in ("https", "http") or not parsed.host:
            raise WebhookRefused(f"{url!r} is not an http or https URL with a host")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        await self.addresses(parsed.host, port, https=parsed.scheme == "https")

    async def addresses(self, host: str, port: int, *, https: bool) -> list[IPAddress]:
        """The addresses of ``host``, every one checked. Raises ``WebhookRefused`` if any
        is refused: a host with one inside address among public ones is refused whole."""
        literal = _literal(host)
        names = [str(literal)] if literal is not None else await self.resolver(host, port)
        if not names:
            raise WebhookRefused(f"the host name {host!r} has no address")
        checked: list[IPAddress] = []
        for name in names:
            address = ipaddress.ip_address(name.split("%", 1)[0])  # drop an IPv6 zone
            reason = self.refusal(address, https=https)
            if reason is not None:
                where = host if literal is not None else f"{host} (resolves to {address})"
                raise WebhookRefused(f"{where} is refused: {reason}")
            checked.append(address)
        return checked


def address_kind(address: IPAddress) -> str | None:
    """The kind of non-public range ``address`` is in (``None`` for a public address)."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        kind = address_kind(embedded)
        return None if kind is None else f"{kind} (IPv4 {embedded} inside IPv6)"
    checks = (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
        ("shared (carrier-grade NAT)", address in _SHARED),
        ("non-public", not address.is_global),
    )
    return next((kind for kind, refused in checks if refused), None)


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


_https: contextvars.ContextVar[bool] = contextvars.ContextVar("parley_push_https", default=True)


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves and checks the host itself, then connects to the address it checked."""

    def __init__(self, guard: WebhookGuard) -> None:
        self._guard = guard
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self._guard.addresses(host, port, https=_https.get())
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._backend.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend interface
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise WebhookRefused("webhooks are never reached through a Unix socket")

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """An httpx transport that connects only where ``guard`` allows, checked on the
    address actually connected to (every redirect hop included), never through a proxy.

    A refused connection raises ``WebhookRefused`` out of the request.
    """

    def __init__(self, guard: WebhookGuard, *, limits: httpx.Limits | None = None) -> None:
        limits = limits or httpx.Limits()
        super().__init__(trust_env=False, limits=limits)
        # httpx has no public hook for the network backend; the pool it builds is
        # replaced by the same pool with the guarded backend (a test checks it holds).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_GuardedBackend(guard),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme not in ("https", "http"):
            raise WebhookRefused(f"{request.url} is not an http or https URL")
        token = _https.set(request.url.scheme == "https")
        try:
            return await super().handle_async_request(request)
        finally:
            _https.reset(token)
