"""The SSRF guard (spec 9 "Push Notification Security": webhook URL validation), at set
time (``check_url``) and at connect time (``GuardedTransport``)."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import pytest

from parley.server.push import GuardedTransport, WebhookGuard, WebhookRefused, address_kind
from tests.push.webhook import webhook

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.8.9.10", "loopback"),
    ("::1", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("169.254.169.254", "link-local"),
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("100.64.0.1", "shared (carrier-grade NAT)"),
    ("192.0.2.1", "private"),  # documentation range
    ("2001:db8::1", "private"),  # documentation range
    ("::ffff:127.0.0.1", "loopback (IPv4 127.0.0.1 inside IPv6)"),
    ("::ffff:169.254.169.254", "link-local (IPv4 169.254.169.254 inside IPv6)"),
    ("2002:a00:1::", "private (IPv4 10.0.0.1 inside IPv6)"),  # 6to4
    ("64:ff9b::7f00:1", "loopback (IPv4 127.0.0.1 inside IPv6)"),  # NAT64
]


def _url(address: str, scheme: str = "https", port: int | None = None) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"{scheme}://{host}{f':{port}' if port else ''}/hook"


def test_public_addresses_have_no_kind() -> None:
    import ipaddress

    for address in ("8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"):
        assert address_kind(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(("address", "kind"), REFUSED)
async def test_set_time_refuses_every_inside_range(address: str, kind: str) -> None:
    with pytest.raises(WebhookRefused, match="is refused") as refused:
        await WebhookGuard().check_url(_url(address))
    assert f"a {kind} address" in str(refused.value)


@pytest.mark.parametrize(("address", "kind"), REFUSED)
async def test_connect_time_refuses_every_inside_range(address: str, kind: str) -> None:
    async with httpx.AsyncClient(transport=GuardedTransport(WebhookGuard())) as http:
        with pytest.raises(WebhookRefused, match=f"a {kind.split(' (')[0]}"):
            await http.post(_url(address), content=b"{}")


def _resolving_to(*answers: Sequence[str]) -> tuple[WebhookGuard, list[str]]:
    """A guard whose resolver gives ``answers`` in turn (a rebinding DNS server)."""
    asked: list[str] = []
    queue = list(answers)

    async def resolver(host: str, port: int) -> Sequence[str]:
        asked.append(host)
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return WebhookGuard(resolver=resolver), asked


async def test_a_host_name_resolving_to_loopback_is_refused() -> None:
    with pytest.raises(WebhookRefused, match=r"localhost \(resolves to (127\.0\.0\.1|::1)\)"):
        await WebhookGuard().check_url("https://localhost:8443/hook")


async def test_a_host_name_resolving_to_loopback_is_refused_at_connect_time() -> None:
    async with httpx.AsyncClient(transport=GuardedTransport(WebhookGuard())) as http:
        with pytest.raises(WebhookRefused, match=r"localhost \(resolves to (127\.0\.0\.1|::1)\)"):
            await http.post("https://localhost:9/hook", content=b"{}")


async def test_one_inside_address_among_public_ones_refuses_the_host() -> None:
    guard, _ = _resolving_to(["93.184.216.34", "10.0.0.5"])
    with pytest.raises(WebhookRefused, match=r"10\.0\.0\.5 is a private address"):
        await guard.check_url("https://hooks.example.com/a2a")


async def test_dns_rebinding_is_refused_at_connect_time() -> None:
    """Public when the config is set, loopback when connecting: the connection is refused,
    because the transport connects only to the address it checked."""
    guard, asked = _resolving_to(["93.184.216.34"], ["127.0.0.1"])
    await guard.check_url("https://rebind.example.com/hook")  # set time: public, accepted
    async with httpx.AsyncClient(transport=GuardedTransport(guard)) as http:
        with pytest.raises(WebhookRefused, match=r"resolves to 127\.0\.0\.1"):
            await http.post("https://rebind.example.com/hook", content=b"{}")
    assert asked == ["rebind.example.com", "rebind.example.com"]


async def test_plain_http_is_refused_even_to_a_public_address() -> None:
    with pytest.raises(WebhookRefused, match="plain http is allowed only"):
        await WebhookGuard().check_url("http://93.184.216.34/hook")


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/x", "file:///etc/passwd", "https:///nohost", "not a url", "gopher://a/"],
)
async def test_urls_that_are_not_http_are_refused(url: str) -> None:
    with pytest.raises(WebhookRefused):
        await WebhookGuard().check_url(url)


async def test_a_host_that_does_not_resolve_is_refused() -> None:
    with pytest.raises(WebhookRefused, match="does not resolve"):
        await WebhookGuard().check_url("https://no-such-host.invalid/hook")


async def test_allowed_ranges_admit_plain_http_and_inside_addresses() -> None:
    guard = WebhookGuard(["127.0.0.0/8", "::1/128"])
    await guard.check_url("http://127.0.0.1:9000/hook")
    await guard.check_url("https://[::1]:9000/hook")
    with pytest.raises(WebhookRefused, match=r"10\.0\.0\.1 is a private address"):
        await guard.check_url("https://10.0.0.1/hook")


async def test_allowed_range_reaches_a_real_webhook_over_http() -> None:
    with webhook() as (hook, url):
        async with httpx.AsyncClient(
            transport=GuardedTransport(WebhookGuard(["127.0.0.1/32"]))
        ) as http:
            response = await http.post(url, content=b"{}")
        assert response.status_code == 200
        assert [r.body for r in hook.received] == [b"{}"]


@pytest.mark.parametrize(
    "target",
    ["http://169.254.169.254/latest/meta-data/", "http://[::1]:9/hook", "https://10.0.0.1/"],
)
async def test_a_redirect_to_a_refused_address_is_refused(target: str) -> None:
    """The webhook (in an allowed range) answers 307 to an address outside it: the hop
    is checked like the first connection, and refused."""
    with webhook() as (hook, url):
        hook.redirect_to = target
        guarded = GuardedTransport(WebhookGuard(["127.0.0.1/32"]))
        async with httpx.AsyncClient(transport=guarded, follow_redirects=True) as http:
            with pytest.raises(WebhookRefused, match="is refused"):
                await http.post(url, content=b"{}")
