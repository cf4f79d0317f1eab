"""The authenticated extended card over every binding (spec 7.10)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from parley.client import ClientConfig, ClientFactory
from parley.server import GRPCOptions, create_app
from parley.types import AgentCard
from tests.interop.agents import extended_card, interop, interop_card
from tests.servers import running


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    app = create_app(
        interop, interop_card(), extended_card=extended_card(), grpc=GRPCOptions(port=0)
    )
    with running(app) as url:
        yield url


def test_the_extended_card_is_completed_like_the_public_card(base: str) -> None:
    """Spec 7.10: the extended card is a complete AgentCard, with the same addresses."""
    public = httpx.get(f"{base}/.well-known/agent-card.json").json()
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "agent/getAuthenticatedExtendedCard"}
    over_jsonrpc = httpx.post(f"{base}/", json=rpc).json()["result"]
    over_rest = httpx.get(f"{base}/v1/card").json()
    for extended in (over_jsonrpc, over_rest):
        assert extended["name"] == "parley interop agent (extended)"
        assert extended["url"] == public["url"]
        assert extended["additionalInterfaces"] == public["additionalInterfaces"]


@pytest.mark.parametrize("protocol", ["1.0", "0.3"])
async def test_over_grpc_too(base: str, protocol: str) -> None:
    """gRPC does not say where the client reached the app: the extended card (and v0.3's
    GetAgentCard) is completed with the base the public card was fetched at, so a v1.0
    card's ``supportedInterfaces`` have their URLs (ProtoJSON drops empty ones)."""
    async with httpx.AsyncClient() as http:
        answer = await http.get(f"{base}/.well-known/agent-card.json")
    public = AgentCard.model_validate(answer.json())
    config = ClientConfig(transports=["GRPC"], protocol=protocol, extended_card=False)
    async with await ClientFactory(config).connect(base) as client:
        extended = await client.get_extended_card()
    assert extended.name == "parley interop agent (extended)"
    assert extended.url == public.url
    if protocol == "1.0":
        assert extended.supported_interfaces == public.supported_interfaces
        assert all(i.url for i in extended.supported_interfaces or ())
