"""Security schemes an agent card declares, after OpenAPI 3.0 (spec 5.5.3)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from parley.types._base import A2AModel


class APIKeySecurityScheme(A2AModel):
    type: Literal["apiKey"] = "apiKey"
    name: str
    """Name of the header, query parameter or cookie that carries the key."""
    in_: Literal["cookie", "header", "query"] = Field(alias="in")
    """Where the key goes; ``in`` on the wire."""
    description: str | None = None


class HTTPAuthSecurityScheme(A2AModel):
    type: Literal["http"] = "http"
    scheme: str
    """HTTP authentication scheme of the Authorization header (RFC 7235), e.g. ``Bearer``."""
    bearer_format: str | None = None
    """Hint of how the bearer token is formatted, e.g. ``JWT``; documentation only."""
    description: str | None = None


class AuthorizationCodeOAuthFlow(A2AModel):
    authorization_url: str
    token_url: str
    scopes: dict[str, str]
    """Scope name to a short description of it."""
    refresh_url: str | None = None


class ClientCredentialsOAuthFlow(A2AModel):
    token_url: str
    scopes: dict[str, str]
    """Scope name to a short description of it."""
    refresh_url: str | None = None


class ImplicitOAuthFlow(A2AModel):
    authorization_url: str
    scopes: dict[str, str]
    """Scope name to a short description of it."""
    refresh_url: str | None = None


class PasswordOAuthFlow(A2AModel):
    token_url: str
    scopes: dict[str, str]
    """Scope name to a short description of it."""
    refresh_url: str | None = None


class OAuthFlows(A2AModel):
    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: ClientCredentialsOAuthFlow | None = None
    implicit: ImplicitOAuthFlow | None = None
    password: PasswordOAuthFlow | None = None


class OAuth2SecurityScheme(A2AModel):
    type: Literal["oauth2"] = "oauth2"
    flows: OAuthFlows
    oauth2_metadata_url: str | None = None
    """Authorization server metadata URL (RFC 8414)."""
    description: str | None = None


class OpenIdConnectSecurityScheme(A2AModel):
    type: Literal["openIdConnect"] = "openIdConnect"
    open_id_connect_url: str
    """OpenID Connect discovery URL of the provider's metadata."""
    description: str | None = None


class MutualTLSSecurityScheme(A2AModel):
    type: Literal["mutualTLS"] = "mutualTLS"
    description: str | None = None


SecurityScheme = Annotated[
    APIKeySecurityScheme
    | HTTPAuthSecurityScheme
    | OAuth2SecurityScheme
    | OpenIdConnectSecurityScheme
    | MutualTLSSecurityScheme,
    Field(discriminator="type"),
]
"""Any security scheme, told apart by its ``type``."""
