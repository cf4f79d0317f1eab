"""Protobuf <-> parley for the agent card and its security schemes.

Not carried by the proto: ``iconUrl`` and ``capabilities.stateTransitionHistory``. A
proto ``OAuthFlows`` holds one flow; a card declaring several keeps the first of
authorizationCode, clientCredentials, implicit, password.
"""

from __future__ import annotations

from typing import Any

from parley.protocol.protobuf._core import set_struct, struct_or_none
from parley.protocol.protobuf._load import pb
from parley.types import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    ImplicitOAuthFlow,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    PasswordOAuthFlow,
    SecurityScheme,
)

Requirements = list[dict[str, list[str]]]


def security_to_proto(requirements: Requirements | None) -> list[Any]:
    return [
        pb.Security(schemes={name: pb.StringList(list=scopes) for name, scopes in item.items()})
        for item in requirements or ()
    ]


def security_from_proto(protos: Any) -> Requirements | None:
    return [
        {name: list(scopes.list) for name, scopes in proto.schemes.items()} for proto in protos
    ] or None


_FLOWS = ("authorization_code", "client_credentials", "implicit", "password")
_FLOW_TYPES: dict[str, Any] = {
    "authorization_code": (AuthorizationCodeOAuthFlow, pb.AuthorizationCodeOAuthFlow),
    "client_credentials": (ClientCredentialsOAuthFlow, pb.ClientCredentialsOAuthFlow),
    "implicit": (ImplicitOAuthFlow, pb.ImplicitOAuthFlow),
    "password": (PasswordOAuthFlow, pb.PasswordOAuthFlow),
}


def flows_to_proto(flows: OAuthFlows) -> Any:
    for name in _FLOWS:
        flow = getattr(flows, name)
        if flow is not None:
            fields = flow.model_dump(exclude_none=True, by_alias=False)
            return pb.OAuthFlows(**{name: _FLOW_TYPES[name][1](**fields)})
    return pb.OAuthFlows()


def flows_from_proto(proto: Any) -> OAuthFlows:
    name = proto.WhichOneof("flow")
    if name is None:
        return OAuthFlows()
    flow = getattr(proto, name)
    fields: dict[str, Any] = {
        field.name: value for field, value in flow.ListFields() if field.name != "scopes"
    }
    fields["scopes"] = dict(flow.scopes)
    return OAuthFlows(**{name: _FLOW_TYPES[name][0](**fields)})


def scheme_to_proto(scheme: SecurityScheme) -> Any:
    description = scheme.description or ""
    if isinstance(scheme, APIKeySecurityScheme):
        return pb.SecurityScheme(
            api_key_security_scheme=pb.APIKeySecurityScheme(
                description=description, location=scheme.in_, name=scheme.name
            )
        )
    if isinstance(scheme, HTTPAuthSecurityScheme):
        return pb.SecurityScheme(
            http_auth_security_scheme=pb.HTTPAuthSecurityScheme(
                description=description,
                scheme=scheme.scheme,
                bearer_format=scheme.bearer_format or "",
            )
        )
    if isinstance(scheme, OAuth2SecurityScheme):
        return pb.SecurityScheme(
            oauth2_security_scheme=pb.OAuth2SecurityScheme(
                description=description,
                flows=flows_to_proto(scheme.flows),
                oauth2_metadata_url=scheme.oauth2_metadata_url or "",
            )
        )
    if isinstance(scheme, OpenIdConnectSecurityScheme):
        return pb.SecurityScheme(
            open_id_connect_security_scheme=pb.OpenIdConnectSecurityScheme(
                description=description, open_id_connect_url=scheme.open_id_connect_url
            )
        )
    return pb.SecurityScheme(
        mtls_security_scheme=pb.MutualTlsSecurityScheme(description=description)
    )


def scheme_from_proto(proto: Any) -> SecurityScheme | None:
    kind = proto.WhichOneof("scheme")
    if kind is None:
        return None  # an empty scheme: nothing a client could use, so it is left out
    inner: Any = getattr(proto, kind)
    description = inner.description or None
    if kind == "api_key_security_scheme":
        location = inner.location if inner.location in ("cookie", "query") else "header"
        return APIKeySecurityScheme(name=inner.name, in_=location, description=description)
    if kind == "http_auth_security_scheme":
        return HTTPAuthSecurityScheme(
            scheme=inner.scheme, bearer_format=inner.bearer_format or None, description=description
        )
    if kind == "oauth2_security_scheme":
        return OAuth2SecurityScheme(
            flows=flows_from_proto(inner.flows),
            oauth2_metadata_url=inner.oauth2_metadata_url or None,
            description=description,
        )
    if kind == "open_id_connect_security_scheme":
        return OpenIdConnectSecurityScheme(
            open_id_connect_url=inner.open_id_connect_url, description=description
        )
    return MutualTLSSecurityScheme(description=description)


def skill_to_proto(skill: AgentSkill) -> Any:
    return pb.AgentSkill(
        id=skill.id,
        name=skill.name,
        description=skill.description,
        tags=skill.tags,
        examples=skill.examples or (),
        input_modes=skill.input_modes or (),
        output_modes=skill.output_modes or (),
        security=security_to_proto(skill.security),
    )


def skill_from_proto(proto: Any) -> AgentSkill:
    return AgentSkill(
        id=proto.id,
        name=proto.name,
        description=proto.description,
        tags=list(proto.tags),
        examples=list(proto.examples) or None,
        input_modes=list(proto.input_modes) or None,
        output_modes=list(proto.output_modes) or None,
        security=security_from_proto(proto.security),
    )


def extension_to_proto(extension: AgentExtension) -> Any:
    proto = pb.AgentExtension(
        uri=extension.uri,
        description=extension.description or "",
        required=bool(extension.required),
    )
    set_struct(proto.params, extension.params)
    return proto


def extension_from_proto(proto: Any) -> AgentExtension:
    return AgentExtension(
        uri=proto.uri,
        description=proto.description or None,
        required=proto.required or None,
        params=struct_or_none(proto, "params"),
    )


def capabilities_to_proto(capabilities: AgentCapabilities) -> Any:
    return pb.AgentCapabilities(
        streaming=bool(capabilities.streaming),
        push_notifications=bool(capabilities.push_notifications),
        extensions=[extension_to_proto(item) for item in capabilities.extensions or ()],
    )


def capabilities_from_proto(proto: Any) -> AgentCapabilities:
    return AgentCapabilities(
        streaming=proto.streaming or None,
        push_notifications=proto.push_notifications or None,
        extensions=[extension_from_proto(item) for item in proto.extensions] or None,
    )


def signature_to_proto(signature: AgentCardSignature) -> Any:
    proto = pb.AgentCardSignature(protected=signature.protected, signature=signature.signature)
    set_struct(proto.header, signature.header)
    return proto


def signature_from_proto(proto: Any) -> AgentCardSignature:
    return AgentCardSignature(
        protected=proto.protected,
        signature=proto.signature,
        header=struct_or_none(proto, "header"),
    )


def card_to_proto(card: AgentCard) -> Any:
    proto = pb.AgentCard(
        protocol_version=card.protocol_version,
        name=card.name,
        description=card.description,
        url=card.url,
        preferred_transport=card.preferred_transport,
        additional_interfaces=[
            pb.AgentInterface(url=item.url, transport=item.transport)
            for item in card.additional_interfaces or ()
        ],
        version=card.version,
        documentation_url=card.documentation_url or "",
        capabilities=capabilities_to_proto(card.capabilities),
        security_schemes={
            name: scheme_to_proto(scheme) for name, scheme in (card.security_schemes or {}).items()
        },
        security=security_to_proto(card.security),
        default_input_modes=card.default_input_modes,
        default_output_modes=card.default_output_modes,
        skills=[skill_to_proto(skill) for skill in card.skills],
        supports_authenticated_extended_card=bool(card.supports_authenticated_extended_card),
        signatures=[signature_to_proto(item) for item in card.signatures or ()],
    )
    if card.provider is not None:
        proto.provider.CopyFrom(
            pb.AgentProvider(url=card.provider.url, organization=card.provider.organization)
        )
    return proto


def card_from_proto(proto: Any) -> AgentCard:
    schemes = {name: scheme_from_proto(item) for name, item in proto.security_schemes.items()}
    return AgentCard(
        protocol_version=proto.protocol_version or "0.3.0",
        name=proto.name,
        description=proto.description,
        url=proto.url,
        preferred_transport=proto.preferred_transport or "JSONRPC",
        additional_interfaces=[
            AgentInterface(url=item.url, transport=item.transport)
            for item in proto.additional_interfaces
        ]
        or None,
        provider=AgentProvider(url=proto.provider.url, organization=proto.provider.organization)
        if proto.HasField("provider")
        else None,
        version=proto.version,
        documentation_url=proto.documentation_url or None,
        capabilities=capabilities_from_proto(proto.capabilities),
        security_schemes={name: item for name, item in schemes.items() if item is not None} or None,
        security=security_from_proto(proto.security),
        default_input_modes=list(proto.default_input_modes),
        default_output_modes=list(proto.default_output_modes),
        skills=[skill_from_proto(skill) for skill in proto.skills],
        supports_authenticated_extended_card=proto.supports_authenticated_extended_card or None,
        signatures=[signature_from_proto(item) for item in proto.signatures] or None,
    )
