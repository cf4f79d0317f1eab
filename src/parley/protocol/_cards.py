"""The agent card across versions, with no dependency (the client reads v1.0 cards with or
without protobuf): v1.0 ProtoJSON <-> the core card (v0.3 wire form plus
``supportedInterfaces`` and ``capabilities.extendedAgentCard``).

v1.0 moves ``url``, ``preferredTransport``, ``protocolVersion`` and
``additionalInterfaces`` into ``supportedInterfaces``, ``supportsAuthenticatedExtendedCard``
into ``capabilities.extendedAgentCard``, wraps each security scheme in a one-of
(``{"apiKeySecurityScheme": {...}}``, ``in`` becomes ``location``) and each security
requirement in ``{"schemes": {name: {"list": scopes}}}``. A v1.0 card read into the core
takes its first interface as ``url`` and ``preferredTransport``; one OAuth flow only, as
the proto's ``OAuthFlows`` is a one-of.
"""

from __future__ import annotations

from typing import Any

Wire = dict[str, Any]


def _copy(source: Wire, *names: str) -> Wire:
    return {name: source[name] for name in names if source.get(name) not in (None, "", [])}


_SCHEME_WRAPPERS = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}
_SCHEME_TYPES = {wrapper: kind for kind, wrapper in _SCHEME_WRAPPERS.items()}
_FLOWS = ("authorizationCode", "clientCredentials", "deviceCode", "implicit", "password")
_COMMON = (
    "name",
    "description",
    "version",
    "provider",
    "documentationUrl",
    "iconUrl",
    "defaultInputModes",
    "defaultOutputModes",
    "signatures",
)


def interfaces_of(card: Wire) -> list[Wire]:
    """The card's ``supportedInterfaces``, or those its v0.3 fields describe."""
    if card.get("supportedInterfaces"):
        return list(card["supportedInterfaces"])
    version = _major_minor(card.get("protocolVersion") or "0.3")
    interfaces = [
        {"url": card["url"], "protocolBinding": card.get("preferredTransport", "JSONRPC")}
    ]
    for extra in card.get("additionalInterfaces") or ():
        entry = {"url": extra["url"], "protocolBinding": extra["transport"]}
        if entry not in interfaces:
            interfaces.append(entry)
    return [{**entry, "protocolVersion": version} for entry in interfaces]


def _major_minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def card_to_v1(card: Wire) -> Wire:
    out = _copy(card, *_COMMON)
    out["supportedInterfaces"] = interfaces_of(card)
    capabilities = _copy(card.get("capabilities", {}), "streaming", "pushNotifications")
    extensions = card.get("capabilities", {}).get("extensions")
    if extensions:
        capabilities["extensions"] = extensions
    extended = card.get("supportsAuthenticatedExtendedCard") or card.get("capabilities", {}).get(
        "extendedAgentCard"
    )
    if extended:
        capabilities["extendedAgentCard"] = True
    out["capabilities"] = capabilities
    if card.get("securitySchemes"):
        out["securitySchemes"] = {
            name: _scheme_to_v1(scheme) for name, scheme in card["securitySchemes"].items()
        }
    if card.get("security"):
        out["securityRequirements"] = _requirements_to_v1(card["security"])
    out["skills"] = [_skill_to_v1(skill) for skill in card.get("skills", ())]
    return out


def _scheme_to_v1(scheme: Wire) -> Wire:
    body = {key: value for key, value in scheme.items() if key != "type"}
    if "in" in body:
        body["location"] = body.pop("in")
    if "flows" in body:
        flows = body["flows"]
        first = next((name for name in _FLOWS if name in flows), None)
        body["flows"] = {first: flows[first]} if first else {}
    return {_SCHEME_WRAPPERS[scheme["type"]]: body}


def _requirements_to_v1(requirements: list[dict[str, list[str]]]) -> list[Wire]:
    return [
        {"schemes": {name: {"list": scopes} for name, scopes in item.items()}}
        for item in requirements
    ]


def _skill_to_v1(skill: Wire) -> Wire:
    out = {key: value for key, value in skill.items() if key != "security"}
    if skill.get("security"):
        out["securityRequirements"] = _requirements_to_v1(skill["security"])
    return out


def card_from_v1(card: Wire) -> Wire:
    out = _copy(card, *_COMMON)
    interfaces = card.get("supportedInterfaces") or []
    out["supportedInterfaces"] = interfaces
    if interfaces:
        first = interfaces[0]
        out["url"] = first.get("url", "")
        out["preferredTransport"] = first.get("protocolBinding", "JSONRPC")
        out["protocolVersion"] = first.get("protocolVersion") or "1.0"
        out["additionalInterfaces"] = [
            {"url": item.get("url", ""), "transport": item.get("protocolBinding", "")}
            for item in interfaces
        ]
    capabilities: Wire = dict(card.get("capabilities") or {})
    if capabilities.get("extendedAgentCard"):
        out["supportsAuthenticatedExtendedCard"] = True
    out["capabilities"] = capabilities
    if card.get("securitySchemes"):
        out["securitySchemes"] = {
            name: _scheme_from_v1(scheme) for name, scheme in card["securitySchemes"].items()
        }
    if card.get("securityRequirements"):
        out["security"] = _requirements_from_v1(card["securityRequirements"])
    out["skills"] = [_skill_from_v1(skill) for skill in card.get("skills", ())]
    return out


def _scheme_from_v1(scheme: Wire) -> Wire:
    for wrapper, body in scheme.items():
        kind = _SCHEME_TYPES.get(wrapper)
        if kind is not None:
            out: dict[str, Any] = {"type": kind, **body}
            if "location" in out:
                out["in"] = out.pop("location")
            out.get("flows", {}).pop("deviceCode", None)  # no such flow in v0.3
            return out
    return {"type": "mutualTLS"}


def _requirements_from_v1(requirements: list[Wire]) -> list[dict[str, list[str]]]:
    return [
        {name: list(scopes.get("list", ())) for name, scopes in item.get("schemes", {}).items()}
        for item in requirements
    ]


def _skill_from_v1(skill: Wire) -> Wire:
    out = {key: value for key, value in skill.items() if key != "securityRequirements"}
    if skill.get("securityRequirements"):
        out["security"] = _requirements_from_v1(skill["securityRequirements"])
    return out
