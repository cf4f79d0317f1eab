"""The agent card: served, checked at startup, URL derived (spec 5.3, 5.5, 5.6)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from parley.server import CardError, create_app
from parley.server._card import FORWARDED, request_base
from parley.types import AgentCard, AgentInterface
from tests.server.agents import ScriptedAgent, card
from tests.server.rpc import body, result


async def fetch(app: object, path: str, **headers: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test:8080") as http:
        return await http.get(path, headers=headers)


@pytest.mark.parametrize("path", ["/.well-known/agent-card.json", "/.well-known/agent.json"])
async def test_card_is_served_at_both_well_known_paths(path: str) -> None:
    """Spec 5.3: /.well-known/agent-card.json; the older agent.json path still answers."""
    response = await fetch(create_app(ScriptedAgent(), card()), path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    served = AgentCard.model_validate_json(response.content)
    assert served.name == "test agent"


async def test_empty_url_is_derived_from_the_address_served() -> None:
    response = await fetch(create_app(ScriptedAgent(), card()), "/.well-known/agent-card.json")
    served = response.json()
    assert served["url"] == "http://agent.test:8080/"
    assert served["additionalInterfaces"] == [
        {"url": "http://agent.test:8080/", "transport": "JSONRPC"},
        {"url": "http://agent.test:8080", "transport": "HTTP+JSON"},
    ]


async def test_url_behind_a_proxy_comes_from_forwarded_headers() -> None:
    response = await fetch(
        create_app(ScriptedAgent(), card()),
        "/.well-known/agent-card.json",
        **{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "agents.example.com"},
    )
    assert response.json()["url"] == "https://agents.example.com/"


async def test_given_url_is_kept_and_its_path_serves_jsonrpc() -> None:
    app = create_app(ScriptedAgent(), card(url="https://example.com/a2a/v1"))
    response = await fetch(app, "/.well-known/agent-card.json")
    assert response.json()["url"] == "https://example.com/a2a/v1"
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        answer = await http.post(
            "/a2a/v1",
            json={"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}},
        )
    assert answer.json()["error"]["code"] == -32001


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"preferred_transport": "GRPC"}, "preferredTransport"),
        (
            {"additional_interfaces": [AgentInterface(url="http://x/", transport="GRPC")]},
            "additionalInterfaces[0].transport",
        ),
        ({"supports_authenticated_extended_card": True}, "supportsAuthenticatedExtendedCard"),
    ],
)
def test_startup_refuses_a_card_that_promises_too_much(
    fields: dict[str, object], named: str
) -> None:
    """The card is checked when the app is built; the error names the bad field."""
    with pytest.raises(CardError, match=named.replace("[", r"\[").replace("]", r"\]")):
        create_app(ScriptedAgent(), card(**fields))


def test_startup_refuses_an_interface_at_another_path() -> None:
    interfaces = [AgentInterface(url="https://example.com/other", transport="JSONRPC")]
    with pytest.raises(CardError, match=r"additionalInterfaces\[0\].url"):
        create_app(
            ScriptedAgent(), card(url="https://example.com/a2a", additional_interfaces=interfaces)
        )


async def test_extended_card_is_returned_when_configured() -> None:
    """Spec 7.10: agent/getAuthenticatedExtendedCard returns the extended card."""
    extended = card(name="test agent (extended)", supports_authenticated_extended_card=True)
    app = create_app(
        ScriptedAgent(), card(supports_authenticated_extended_card=True), extended_card=extended
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        got = await result(http, "agent/getAuthenticatedExtendedCard")
        assert got["name"] == "test agent (extended)"


async def test_extended_card_provider_can_refuse_the_caller() -> None:
    """Spec 7.10: a refused caller gets HTTP 401 over JSON-RPC too, with the error body."""
    from parley.protocol import UnauthenticatedError
    from parley.server import CallContext

    async def provider(call: CallContext) -> AgentCard:
        if call.headers.get("authorization") != "Bearer good":
            raise UnauthenticatedError("A bearer token is required")
        return card(name="secret")

    app = create_app(
        ScriptedAgent(), card(supports_authenticated_extended_card=True), extended_card=provider
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        refused = await http.post("/", json=body("agent/getAuthenticatedExtendedCard"))
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == -31401
        http.headers["Authorization"] = "Bearer good"
        assert (await result(http, "agent/getAuthenticatedExtendedCard"))["name"] == "secret"


async def test_health() -> None:
    response = await fetch(create_app(ScriptedAgent(), card()), "/health")
    assert response.json() == {"status": "ok"}


def test_each_request_gets_the_base_it_reached_even_when_bases_are_kept() -> None:
    """``request_base`` keeps what it made by scheme, Host and mount path (and, from a
    trusted proxy, its ``X-Forwarded-*``): a request that differs in any of them (or names
    no Host) gets its own."""

    def scope(
        scheme: str = "http", root: str = "", server: tuple[str, int] = ("10.0.0.1", 80)
    ) -> dict[str, Any]:
        return {"scheme": scheme, "root_path": root, "server": server, "headers": []}

    for _ in range(2):  # the second time, from what was kept
        assert request_base(scope(), {"host": "a.test"}) == "http://a.test"
        assert request_base(scope(), {"host": "b.test:81"}) == "http://b.test:81"
        assert request_base(scope("https"), {"host": "a.test"}) == "https://a.test"
        assert request_base(scope(root="/m"), {"host": "a.test"}) == "http://a.test/m"
        assert request_base(scope(), {}) == "http://10.0.0.1:80"
        assert request_base(scope(server=("10.0.0.2", 8)), {}) == "http://10.0.0.2:8"
        forwarded = {**scope(), FORWARDED: True}
        proxied = {"host": "a.test", "x-forwarded-host": "c.test"}
        assert request_base(forwarded, proxied) == "http://c.test"
        assert (
            request_base(forwarded, {**proxied, "x-forwarded-proto": "https"}) == "https://c.test"
        )
        assert request_base(forwarded, {**proxied, "x-forwarded-host": "d.test"}) == "http://d.test"
        assert request_base(forwarded, {"host": "a.test"}) == "http://a.test"
        assert request_base(scope(), proxied) == "http://a.test"  # not forwarded: not believed


@pytest.mark.parametrize("secured", [False, True], ids=["schemes-only", "security-required"])
async def test_a_401_from_the_extended_card_carries_the_cards_challenge(secured: bool) -> None:
    """RFC 7235 §3.1, spec 4.4: a 401 the extended card's function raises names the
    card's schemes in WWW-Authenticate, on every HTTP binding and version, as the
    authentication layer's own 401s do."""
    from parley.protocol import UnauthenticatedError
    from parley.server import APIKeyVerifier, CallContext
    from parley.types import APIKeySecurityScheme, HTTPAuthSecurityScheme

    async def provider(call: CallContext) -> AgentCard:
        if call.headers.get("authorization") != "Bearer extended":
            raise UnauthenticatedError("The extended card needs a bearer token")
        return card(name="secret")

    schemes: dict[str, Any] = {"bearer": HTTPAuthSecurityScheme(scheme="bearer")}
    options: dict[str, Any] = {}
    if secured:
        schemes["apiKey"] = APIKeySecurityScheme(name="X-API-Key", in_="header")
        options["security"] = {"apiKey": APIKeyVerifier({"alice": "secret"})}
    public = card(
        supports_authenticated_extended_card=True,
        security_schemes=schemes,
        security=[{"apiKey": []}] if secured else None,
    )
    app = create_app(ScriptedAgent(), public, extended_card=provider, **options)
    expected = (
        'APIKey realm="a2a", in="header", name="X-API-Key"' if secured else 'Bearer realm="a2a"'
    )
    transport = httpx.ASGITransport(app=app)
    headers = {"X-API-Key": "secret"} if secured else {}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://agent.test", headers=headers
    ) as http:
        answers = [
            await http.post("/", json=body("agent/getAuthenticatedExtendedCard")),
            await http.post("/", json=body("GetExtendedAgentCard"), headers={"A2A-Version": "1.0"}),
            await http.get("/v1/card"),
            await http.get("/extendedAgentCard", headers={"A2A-Version": "1.0"}),
        ]
    for answer in answers:
        assert answer.status_code == 401, answer.text
        assert answer.headers["www-authenticate"] == expected
