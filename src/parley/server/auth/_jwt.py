"""JWT bearer tokens (RFC 7519) for ``http`` bearer, ``oauth2`` and ``openIdConnect``
schemes, verified with PyJWT.

Keys come from a key given in code, a JWKS URL, or a discovery document: OpenID Connect
discovery (the ``openIdConnect`` scheme's ``openIdConnectUrl``) or OAuth 2.0
authorization server metadata (RFC 8414, the ``oauth2`` scheme's ``oauth2MetadataUrl``),
whose ``jwks_uri`` and ``issuer`` are used. Fetched keys are cached (``KeySet`` of
``parley._jwks``, the one fetch-and-cache of a key set, which the client's ``AgentKeys``
is too); a token signed by a key id the cache does not know makes it fetch again (at most
every ``REFRESH_EVERY`` seconds), which is how a provider's key rotation reaches the server.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import httpx
import jwt

from parley._jwks import KeySet, KeysUnavailable, UnknownKey
from parley.protocol import InternalError, UnauthenticatedError
from parley.server.agent._card_error import CardError
from parley.server.agent._context import Principal
from parley.server.auth._auth import Check, Credentials
from parley.server.auth._verifiers import check_bearer_scheme
from parley.types import OAuth2SecurityScheme, OpenIdConnectSecurityScheme, SecurityScheme

logger = logging.getLogger("parley.server.auth")

REFRESH_EVERY = 10.0
"""Seconds: a token signed by a key not known yet refetches the keys at most this often."""

DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")


class JWTVerifier:
    """Verifies JWT bearer tokens: signature, ``exp``/``nbf`` (with ``leeway`` seconds),
    ``iss`` and ``aud``; the principal is the ``sub`` claim (or ``name_claim``) and its
    scopes come from ``scope`` (space-separated) or ``scp``.

    Keys: ``key`` (a public key, PEM or ``cryptography`` object; or an HMAC secret with
    ``algorithms=("HS256",)``), or ``jwks_url``, or ``discovery_url``; without any of
    them an ``openIdConnect`` scheme's ``openIdConnectUrl`` or an ``oauth2`` scheme's
    ``oauth2MetadataUrl`` is the discovery document. ``issuer`` defaults to the discovery
    document's. Give ``audience`` (this agent's identifier at the provider): without it
    the audience is not checked, and tokens meant for other services are accepted.
    """

    def __init__(
        self,
        *,
        key: Any = None,
        jwks_url: str | None = None,
        discovery_url: str | None = None,
        issuer: str | None = None,
        audience: str | Sequence[str] | None = None,
        leeway: float = 30.0,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        name_claim: str = "sub",
        cache_seconds: float = 600.0,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.key = key
        self.jwks_url = jwks_url
        self.discovery_url = discovery_url
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.algorithms = list(algorithms)
        self.name_claim = name_claim
        self.cache_seconds = cache_seconds
        self.http_client = http_client

    def bind(self, name: str, scheme: SecurityScheme) -> Check:
        check_bearer_scheme(name, scheme, self)
        keys = self._key_set(name, scheme)

        async def check(credentials: Credentials) -> Principal:
            claims = await self.decode(credentials.authorization("Bearer"), keys)
            return Principal(
                name=str(claims.get(self.name_claim) or claims.get("client_id") or "unknown"),
                scheme=name,
                scopes=_scopes(claims),
                claims=claims,
            )

        return check

    def _key_set(self, name: str, scheme: SecurityScheme) -> KeySet | None:
        if self.key is not None:
            return None
        discovery = self.discovery_url
        if discovery is None and self.jwks_url is None:
            if isinstance(scheme, OpenIdConnectSecurityScheme):
                discovery = scheme.open_id_connect_url
            elif isinstance(scheme, OAuth2SecurityScheme):
                discovery = scheme.oauth2_metadata_url
        if discovery is None and self.jwks_url is None:
            raise CardError(f"JWTVerifier for {name!r} needs key, jwks_url or discovery_url")
        return KeySet(
            None if discovery else self.jwks_url,
            discovery_url=discovery,
            max_age=self.cache_seconds,
            refresh_every=REFRESH_EVERY,
            http=self.http_client,
        )

    async def decode(self, token: str, keys: KeySet | None) -> dict[str, Any]:
        """The verified claims of ``token``; raises ``UnauthenticatedError`` saying why not."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise UnauthenticatedError("The bearer token is not a JWT") from None
        key = self.key if keys is None else await _signing_key(keys, header.get("kid"))
        issuer = self.issuer or (keys.issuer if keys is not None else None)
        required = ["exp"] + (["iss"] if issuer else []) + (["aud"] if self.audience else [])
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=self.algorithms,
                audience=self.audience,
                issuer=issuer,
                leeway=self.leeway,
                options={"require": required, "verify_aud": self.audience is not None},
            )
        except jwt.PyJWTError as error:
            raise UnauthenticatedError(_reason(error)) from None
        return claims

    def challenge(self, name: str, scheme: SecurityScheme) -> str:
        return 'Bearer realm="a2a"'


async def _signing_key(keys: KeySet, kid: str | None) -> jwt.PyJWK:
    try:
        return await keys.key(kid)
    except UnknownKey:
        raise UnauthenticatedError(
            "The bearer token is signed with a key this agent does not know"
        ) from None
    except KeysUnavailable as error:
        logger.warning("could not fetch the token signing keys: %s", error.message)
        raise InternalError(
            "The agent could not fetch the keys to check the token; try again later"
        ) from None


def _reason(error: jwt.PyJWTError) -> str:
    if isinstance(error, jwt.ExpiredSignatureError):
        return "The bearer token has expired"
    if isinstance(error, jwt.ImmatureSignatureError):
        return "The bearer token is not valid yet"
    if isinstance(error, jwt.InvalidAudienceError):
        return "The bearer token is meant for another audience"
    if isinstance(error, jwt.InvalidIssuerError):
        return "The bearer token comes from an issuer this agent does not trust"
    if isinstance(error, jwt.MissingRequiredClaimError):
        return f"The bearer token lacks the {error.claim!r} claim"
    if isinstance(error, jwt.InvalidSignatureError):
        return "The bearer token's signature is not valid"
    if isinstance(error, jwt.InvalidAlgorithmError):
        return "The bearer token is signed with an algorithm this agent does not accept"
    return "The bearer token is not valid"


def _scopes(claims: dict[str, Any]) -> frozenset[str]:
    scopes = claims.get("scope", claims.get("scp", ""))
    if isinstance(scopes, str):
        return frozenset(scopes.split())
    if isinstance(scopes, list):
        return frozenset(str(scope) for scope in scopes)
    return frozenset()
