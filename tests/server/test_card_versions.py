"""The agent card per A2A version and its caching headers.

A request asking for v1.0 (``A2A-Version``, header or query, v1.0.1 §3.6.1) gets the card
in v1.0's shape (v1.0.1 §4.4.1: ``supportedInterfaces``, the security in v1.0's one-of
form, no v0.3 member); any other request the v0.3 card that v0.3 clients read. Each is
cacheable (v1.0.1 §8.6.1): ``Cache-Control: max-age``, an ``ETag`` made from the bytes
served, ``If-None-Match`` answered 304.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from google.protobuf import json_format

from parley.client import AgentKeys, CardVerifier
from parley.client._card import parse_card
from parley.protocol.v1 import pb1
from parley.server import APIKeyVerifier, SigningKeys, create_app
from parley.types import AgentCard, APIKeySecurityScheme
from tests.server.agents import ScriptedAgent, card

CARD = "/.well-known/agent-card.json"
V1 = {"A2A-Version": "1.0"}
V03_ONLY = ("url", "preferredTransport", "protocolVersion", "additionalInterfaces")


def _secured_card(**fields: Any) -> AgentCard:
    scheme = APIKeySecurityScheme(name="X-API-Key", in_="header")
    return card(
        security_schemes={"apiKey": scheme},
        security=[{"apiKey": []}],
        supports_authenticated_extended_card=True,
        **fields,
    )


def _app(**options: Any) -> Any:
    extended = _secured_card(name="test agent (extended)")
    return create_app(
        ScriptedAgent(),
        _secured_card(),
        extended_card=extended,
        security={"apiKey": APIKeyVerifier({"alice": "secret"})},
        **options,
    )


async def _get(app: Any, path: str = CARD, **headers: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test:8080") as http:
        return await http.get(path, headers=headers)


@pytest.mark.parametrize("how", ["header", "query"])
async def test_v1_request_gets_the_v1_card(how: str) -> None:
    app = _app()
    if how == "header":
        answer = await _get(app, **V1)
    else:
        answer = await _get(app, f"{CARD}?A2A-Version=1.0")
    assert answer.status_code == 200
    served = answer.json()
    for member in (*V03_ONLY, "supportsAuthenticatedExtendedCard", "security"):
        assert member not in served, member
    assert served["capabilities"]["extendedAgentCard"] is True
    assert served["securitySchemes"] == {
        "apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}
    }
    assert served["securityRequirements"] == [{"schemes": {"apiKey": {}}}]
    first = served["supportedInterfaces"][0]
    assert first == {
        "url": "http://agent.test:8080/",
        "protocolBinding": "JSONRPC",
        "protocolVersion": "1.0",
    }
    # strictly the v1.0 AgentCard: no member the proto does not define
    json_format.ParseDict(served, pb1.AgentCard())


@pytest.mark.parametrize("headers", [{}, {"A2A-Version": "0.3"}, {"A2A-Version": "9.9"}])
async def test_other_requests_get_the_v03_card(headers: dict[str, str]) -> None:
    served = (await _get(_app(), **headers)).json()
    assert served["url"] == "http://agent.test:8080/"
    assert served["preferredTransport"] == "JSONRPC"
    assert served["protocolVersion"] == "0.3.0"
    assert served["securitySchemes"]["apiKey"]["type"] == "apiKey"
    assert served["security"] == [{"apiKey": []}]
    assert served["supportsAuthenticatedExtendedCard"] is True


async def test_parleys_client_reads_both_cards_alike() -> None:
    app = _app()
    v03 = parse_card((await _get(app)).content)
    v10 = parse_card((await _get(app, **V1)).content)
    assert v10.url == v03.url
    assert v10.security == v03.security
    assert v10.security_schemes == v03.security_schemes
    assert v10.supported_interfaces == v03.supported_interfaces
    assert v10.supports_authenticated_extended_card


@pytest.mark.parametrize("headers", [{}, V1])
async def test_each_versions_card_is_signed_over_its_own_json(headers: dict[str, str]) -> None:
    keys = SigningKeys.generate()
    served = (await _get(_app(signing_keys=keys), **headers)).json()
    verified = await CardVerifier(AgentKeys(jwks=keys.jwks)).verify(served)
    assert verified.status == "verified"


@pytest.mark.parametrize("headers", [{}, V1])
async def test_the_card_is_cacheable(headers: dict[str, str]) -> None:
    """§8.6.1: Cache-Control with max-age and an ETag; If-None-Match naming it is 304."""
    app = _app()
    first = await _get(app, **headers)
    etag = first.headers["etag"]
    assert first.headers["cache-control"] == "public, max-age=300"
    assert "A2A-Version" in first.headers["vary"]
    again = await _get(app, **headers, **{"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    among = await _get(app, **headers, **{"If-None-Match": f'"other", W/{etag}'})
    assert among.status_code == 304
    stale = await _get(app, **headers, **{"If-None-Match": '"stale"'})
    assert stale.status_code == 200
    assert stale.content == first.content


async def test_each_version_and_address_has_its_own_etag() -> None:
    app = _app()
    v03 = await _get(app)
    v10 = await _get(app, **V1)
    assert v03.headers["etag"] != v10.headers["etag"]
    elsewhere = await _get(app, Host="other.test")
    assert elsewhere.headers["etag"] != v03.headers["etag"]
    cross = await _get(app, **V1, **{"If-None-Match": v03.headers["etag"]})
    assert cross.status_code == 200


async def test_max_age_is_configurable_and_the_old_path_is_cacheable() -> None:
    app = _app(card_max_age=60)
    answer = await _get(app)
    assert answer.headers["cache-control"] == "public, max-age=60"
    old = await _get(app, "/.well-known/agent.json")
    assert old.headers["cache-control"] == "public, max-age=60"
    again = await _get(app, "/.well-known/agent.json", **{"If-None-Match": old.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.parametrize(
    ("path", "headers"), [("/v1/card", {}), ("/extendedAgentCard", V1)], ids=["0.3", "1.0"]
)
async def test_the_extended_card_is_revalidated(path: str, headers: dict[str, str]) -> None:
    """The extended card is the caller's own: kept only privately and revalidated each
    time, a 304 when it has not changed."""
    app = _app()
    caller = {**headers, "X-API-Key": "secret"}
    first = await _get(app, path, **caller)
    assert first.status_code == 200, first.text
    assert first.json()["name"] == "test agent (extended)"
    assert first.headers["cache-control"] == "private, no-cache"
    again = await _get(app, path, **caller, **{"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    assert again.content == b""
    anonymous = await _get(app, path, **headers, **{"If-None-Match": first.headers["etag"]})
    assert anonymous.status_code == 401
