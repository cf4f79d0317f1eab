"""The agent card: served where clients look, complete in each version's shape, its
interfaces answering, its security schemes well-formed, its signatures valid, cacheable."""

from __future__ import annotations

from typing import Any

from parley.check._agent import CARD_PATH
from parley.check._areas._wire import unknown_task_id
from parley.check._model import V0_3, V1_0, Failed, Level, Needs, Scope, Skipped, check
from parley.check._probe import Probe
from parley.client import AgentKeys, CardError, CardVerifier, ClientError

_V03_REQUIRED = (
    "name",
    "description",
    "url",
    "version",
    "protocolVersion",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
)
_V1_REQUIRED = (
    "name",
    "description",
    "supportedInterfaces",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
)
_SKILL_REQUIRED = ("id", "name", "description", "tags")


@check(
    "card.served",
    "The agent card is served as JSON at /.well-known/agent-card.json",
    Level.must,
    v03="5.3",
    v10="8.2",
    scope=Scope.agent,
)
async def card_served(probe: Probe) -> None:
    response = probe.agent.card_response
    if response is None:
        raise Failed(probe.agent.card_problem or "the card could not be fetched")
    probe.record(
        f"GET {probe.agent.base_url}{CARD_PATH}",
        f"HTTP {response.status_code}\n"
        f"content-type: {response.headers.get('content-type')}\n\n{response.text}",
    )
    if response.status_code != 200:
        raise Failed(f"HTTP {response.status_code} for the card")
    if probe.agent.card_json is None:
        raise Failed("the card is not a JSON object")
    if "application/json" not in response.headers.get("content-type", ""):
        raise Failed(f"content-type {response.headers.get('content-type')!r}, not application/json")


@check(
    "card.v0.3-members",
    "The card has every member v0.3 requires, and parses as a v0.3 card",
    Level.must,
    v03="5.5",
    scope=Scope.version,
    needs=Needs(versions=(V0_3,)),
)
async def card_v03(probe: Probe) -> None:
    raw = _card(probe.agent.card_json)
    probe.record("the card, no A2A-Version", str(raw))
    _required(raw, _V03_REQUIRED, "")
    _skills(raw)
    if probe.agent.card_problem:
        raise Failed(probe.agent.card_problem)


@check(
    "card.v1.0-members",
    "The card asked for in v1.0 has every member v1.0 requires, each interface complete",
    Level.must,
    v10="4.4.1",
    scope=Scope.version,
    needs=Needs(versions=(V1_0,)),
)
async def card_v1(probe: Probe) -> None:
    raw = _card(probe.agent.card_v1_json)
    probe.record("the card, A2A-Version: 1.0", str(raw))
    _required(raw, _V1_REQUIRED, "")
    for index, interface in enumerate(raw["supportedInterfaces"]):
        if not isinstance(interface, dict):
            raise Failed(f"supportedInterfaces.{index} is not an object")
        _required(
            interface,
            ("url", "protocolBinding", "protocolVersion"),
            f"supportedInterfaces.{index}.",
        )
    _skills(raw)


@check(
    "card.interface-answers",
    "Every interface the card declares answers A2A at its URL",
    Level.must,
    v03="5.6.4",
    v10="8.3.1",
)
async def interface_answers(probe: Probe) -> None:
    client = await probe.client()
    try:
        await probe.ok("get_task of an unknown task", client.get_task(unknown_task_id()))
    except Failed as failed:  # an A2A error is an A2A answer; these are not
        not_a2a = ("AgentUnreachableError", "NotAnAgentError", "InvalidAgentResponseError")
        if any(name in probe.exchanges[-1].answer for name in not_a2a):
            raise Failed(f"no A2A answer: {failed}") from None
    except ClientError as error:  # no transport for it (an extra not installed)
        raise Failed(f"the interface cannot be used: {error.message}") from None


@check(
    "card.security-schemes",
    "Security requirements name declared schemes, each scheme well-formed",
    Level.must,
    v03="5.5.3",
    v10="4.5.1",
    scope=Scope.agent,
    needs=Needs(security=True),
)
async def security_schemes(probe: Probe) -> None:
    for raw, v1 in ((probe.agent.card_json, False), (probe.agent.card_v1_json, True)):
        if raw is None:
            continue
        schemes = raw.get("securitySchemes") or {}
        probe.record("securitySchemes" + (" (v1.0)" if v1 else ""), str(schemes))
        for requirement in _requirements(raw, v1):
            for name in requirement:
                if name not in schemes:
                    raise Failed(f"a security requirement names {name!r}, not in securitySchemes")
        for name, scheme in schemes.items():
            problem = _scheme_problem(scheme)
            if problem:
                raise Failed(f"securitySchemes.{name}: {problem}")


@check(
    "card.signatures",
    "Signatures on the card verify with the agent's published keys",
    Level.must,
    v03="5.5.6",
    v10="8.4.3",
    scope=Scope.agent,
)
async def signatures(probe: Probe) -> None:
    cards = [c for c in (probe.agent.card_json, probe.agent.card_v1_json) if c]
    signed = [c for c in cards if c.get("signatures")]
    if not signed:
        raise Skipped("the card is not signed")
    keys = AgentKeys.of_agent(probe.agent.base_url, http=probe.agent.http)
    for card in signed:
        verifier = CardVerifier(keys, "require")
        try:
            await verifier.verify(card)
        except CardError as error:
            probe.record("signatures", str(card.get("signatures")))
            raise Failed(error.message) from None


@check(
    "card.cache-control",
    "The card is served with Cache-Control and a max-age",
    Level.should,
    v10="8.6.1",
    scope=Scope.version,
    needs=Needs(versions=(V1_0,)),
)
async def cache_control(probe: Probe) -> None:
    response = await probe.http("GET", _card_url(probe), None, {"A2A-Version": V1_0}, True, None)
    value = response.headers.get("cache-control", "")
    if "max-age" not in value:
        raise Failed(f"Cache-Control is {value!r}: no max-age")


@check(
    "card.etag",
    "The card is served with an ETag, and If-None-Match with it answers 304",
    Level.should,
    v10="8.6.1",
    scope=Scope.version,
    needs=Needs(versions=(V1_0,)),
)
async def etag(probe: Probe) -> None:
    headers = {"A2A-Version": V1_0}
    response = await probe.http("GET", _card_url(probe), None, headers, True, None)
    tag = response.headers.get("etag")
    if not tag:
        raise Failed("no ETag header")
    again = await probe.http(
        "GET", _card_url(probe), None, {**headers, "If-None-Match": tag}, True, None
    )
    if again.status_code != 304:
        raise Failed(f"If-None-Match with the card's ETag answered {again.status_code}, not 304")


@check(
    "card.no-extended-card",
    "Asking for an extended card the card does not declare is the version's error",
    Level.must,
    v03="7.10",
    v10="3.3.4",
    needs=Needs(capability="!extendedAgentCard"),
)
async def no_extended_card(probe: Probe) -> None:
    from parley.protocol import (
        AuthenticatedExtendedCardNotConfiguredError,
        UnsupportedOperationError,
    )

    client = await probe.client()
    expected: Any = (
        UnsupportedOperationError if probe.v1 else AuthenticatedExtendedCardNotConfiguredError
    )
    await probe.error("get_extended_card", client.get_extended_card(), expected)


def _card_url(probe: Probe) -> str:
    return probe.agent.base_url.rstrip("/") + CARD_PATH


def _card(raw: dict[str, Any] | None) -> dict[str, Any]:
    if raw is None:
        raise Failed("no card was served")
    return raw


def _required(raw: dict[str, Any], members: tuple[str, ...], where: str) -> None:
    missing = [m for m in members if raw.get(m) in (None, "") and not isinstance(raw.get(m), list)]
    if missing:
        raise Failed(f"missing required members: {', '.join(where + m for m in missing)}")


def _skills(raw: dict[str, Any]) -> None:
    if not isinstance(raw.get("skills"), list):
        raise Failed("skills is not a list")
    for index, skill in enumerate(raw["skills"]):
        if not isinstance(skill, dict):
            raise Failed(f"skills.{index} is not an object")
        _required(skill, _SKILL_REQUIRED, f"skills.{index}.")


def _requirements(raw: dict[str, Any], v1: bool) -> list[dict[str, Any]]:
    if not v1:
        return [r for r in raw.get("security") or () if isinstance(r, dict)]
    found = []
    for requirement in raw.get("securityRequirements") or ():
        if isinstance(requirement, dict):
            found.append(requirement.get("schemes") or {})
    return found


def _scheme_problem(scheme: Any) -> str:
    if not isinstance(scheme, dict):
        return "not an object"
    kind = scheme.get("type")
    if kind is None and len(scheme) == 1:  # v1.0: a one-of, named by its member
        kind, scheme = next(iter(scheme.items()))
        if not isinstance(scheme, dict):
            return "not an object"
    needed = {
        "apiKey": ("in", "name"),
        "apiKeySecurityScheme": ("location", "name"),
        "http": ("scheme",),
        "httpAuthSecurityScheme": ("scheme",),
        "oauth2": ("flows",),
        "oauth2SecurityScheme": ("flows",),
        "openIdConnect": ("openIdConnectUrl",),
        "openIdConnectSecurityScheme": ("openIdConnectUrl",),
        "mutualTLS": (),
        "mtlsSecurityScheme": (),
    }.get(str(kind))
    if needed is None:
        return f"unknown scheme type {kind!r}"
    missing = [m for m in needed if not scheme.get(m)]
    return f"{kind} without {', '.join(missing)}" if missing else ""
