"""Authentication, when the card declares it: refused without credentials on every
binding (401 with a challenge, gRPC UNAUTHENTICATED), accepted with them; the extended
card behind them."""

from __future__ import annotations

import httpx

from parley.check._areas._wire import get_unknown_task, unknown_task_id
from parley.check._model import JSONRPC, REST, Failed, Level, Needs, check
from parley.check._probe import GrpcAnswer, Probe


@check(
    "auth.required",
    "A call without credentials is refused: HTTP 401, gRPC UNAUTHENTICATED",
    Level.must,
    v03="4.4",
    v10="7.4",
    needs=Needs(security=True),
)
async def required(probe: Probe) -> None:
    answer = await get_unknown_task(probe, unknown_task_id(), anonymous=True)
    if isinstance(answer, GrpcAnswer):
        if answer.code != "UNAUTHENTICATED":
            raise Failed(f"without credentials: gRPC {answer.code}, not UNAUTHENTICATED")
    elif answer.status_code != 401:
        raise Failed(f"without credentials: HTTP {answer.status_code}, not 401")


@check(
    "auth.challenge",
    "A 401 names the scheme to use in WWW-Authenticate",
    Level.should,
    v03="4.4",
    v10="3.3.2",
    needs=Needs(security=True, bindings=(JSONRPC, REST)),
)
async def challenge(probe: Probe) -> None:
    answer = await get_unknown_task(probe, unknown_task_id(), anonymous=True)
    assert isinstance(answer, httpx.Response)
    if answer.status_code != 401:
        raise Failed(f"without credentials: HTTP {answer.status_code}, not 401")
    if not answer.headers.get("www-authenticate"):
        raise Failed("the 401 has no WWW-Authenticate header")


@check(
    "auth.accepted",
    "A call with the credentials given is not refused",
    Level.must,
    v03="4.4",
    v10="7.4",
    needs=Needs(security=True, credentials=True),
)
async def accepted(probe: Probe) -> None:
    answer = await get_unknown_task(probe, unknown_task_id())
    refused = (
        answer.code in ("UNAUTHENTICATED", "PERMISSION_DENIED")
        if isinstance(answer, GrpcAnswer)
        else answer.status_code in (401, 403)
    )
    if refused:
        raise Failed("the credentials given were refused")


@check(
    "auth.extended-card",
    "With credentials, the extended card the card declares is served",
    Level.must,
    v03="7.10",
    v10="3.1.11",
    needs=Needs(capability="extendedAgentCard", credentials=True),
)
async def extended_card(probe: Probe) -> None:
    client = await probe.client()
    card = await probe.ok("get_extended_card", client.get_extended_card())
    if not card.name:
        raise Failed("the extended card has no name")
