"""Credentials picked by the card's security requirements (spec 4, 5.5 security).

A card's ``security`` lists alternatives (any one will do); each alternative names
schemes that must all be satisfied. ``CredentialsAuth`` asks a ``CredentialProvider``
for a credential per scheme name and applies the first alternative it can satisfy in
full, each credential placed as its scheme says.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Protocol

from parley.client._interceptors import ClientCall, ClientInterceptor, put_api_key
from parley.types import (
    AgentCard,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityScheme,
)


class CredentialProvider(Protocol):
    """Gives the credential for a security scheme of the card, or ``None``."""

    async def get_credential(self, scheme_name: str, call: ClientCall) -> str | None:
        """``scheme_name`` is the key in the card's ``securitySchemes``.

        The credential is a bearer token (http bearer, oauth2, openIdConnect), an API
        key, or ``user:password`` for http basic.
        """
        ...


class StaticCredentials:
    """A ``CredentialProvider`` over a fixed map of scheme name to credential."""

    def __init__(self, credentials: Mapping[str, str]) -> None:
        self.credentials = dict(credentials)

    async def get_credential(self, scheme_name: str, call: ClientCall) -> str | None:
        return self.credentials.get(scheme_name)


class APIKeyAuth(ClientInterceptor):
    """Sends an API key where the agent expects it.

    With ``name`` and ``location`` (``"header"``, ``"query"`` or ``"cookie"``) it sends
    there; otherwise it follows the card's first ``apiKey`` security scheme (or, with
    ``scheme``, the scheme of that name), falling back to the ``X-API-Key`` header.
    """

    def __init__(
        self,
        key: str,
        *,
        name: str | None = None,
        location: str | None = None,
        scheme: str | None = None,
    ) -> None:
        self.key = key
        self.name = name
        self.location = location
        self.scheme = scheme

    async def before(self, call: ClientCall) -> None:
        name, location = self.name, self.location
        if name is None or location is None:
            found = api_key_scheme(call.card, self.scheme)
            name = name or (found.name if found else "X-API-Key")
            location = location or (found.in_ if found else "header")
        put_api_key(call.context, self.key, name, location)


class CredentialsAuth(ClientInterceptor):
    """Applies credentials for the card's first satisfiable security requirement.

    Calls made without a card, or to a card that asks for no security, go out as they are.
    """

    def __init__(self, provider: CredentialProvider) -> None:
        self.provider = provider

    async def before(self, call: ClientCall) -> None:
        card = call.card
        if card is None or not card.security:
            return
        schemes = card.security_schemes or {}
        for requirement in card.security:
            found: list[tuple[SecurityScheme, str]] = []
            for name in requirement:
                scheme = schemes.get(name)
                credential = await self.provider.get_credential(name, call)
                if scheme is None or credential is None:
                    break
                found.append((scheme, credential))
            else:
                for scheme, credential in found:
                    _apply(call, scheme, credential)
                return


def _apply(call: ClientCall, scheme: SecurityScheme, credential: str) -> None:
    headers = call.context.headers
    if isinstance(scheme, APIKeySecurityScheme):
        put_api_key(call.context, credential, scheme.name, scheme.in_)
    elif isinstance(scheme, HTTPAuthSecurityScheme) and scheme.scheme.lower() == "basic":
        headers["Authorization"] = "Basic " + base64.b64encode(credential.encode()).decode()
    elif isinstance(scheme, HTTPAuthSecurityScheme):
        headers["Authorization"] = f"{scheme.scheme.capitalize()} {credential}"
    elif isinstance(scheme, OAuth2SecurityScheme | OpenIdConnectSecurityScheme):
        headers["Authorization"] = f"Bearer {credential}"
    elif isinstance(scheme, MutualTLSSecurityScheme):
        pass  # a client certificate is configured on the http client, not per call


def api_key_scheme(card: AgentCard | None, name: str | None = None) -> APIKeySecurityScheme | None:
    """The card's API key scheme called ``name``, or its first one."""
    if card is None or not card.security_schemes:
        return None
    for scheme_name, scheme in card.security_schemes.items():
        if isinstance(scheme, APIKeySecurityScheme) and name in (None, scheme_name):
            return scheme
    return None
