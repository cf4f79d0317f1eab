"""JWT bearer tokens (RFC 7519) for ``http`` bearer, ``oauth2`` and ``openIdConnect``
schemes, verified with PyJWT.

Keys come from a key given in code, a JWKS URL, or a discovery document: OpenID Connect
discovery (the ``openIdConnect`` scheme's ``openIdConnectUrl``) or OAuth 2.0
authorization server metadata (RFC 8414, the ``oauth2`` scheme's ``oauth2MetadataUrl``),
whose ``jwks_uri`` and ``issuer`` are used. Fetched keys are cached; a token signed by a
key id the cache does not know makes it fetch again (at most once per
``refresh_interval``), which is how a provider's key rotation reaches the server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

import httpx
import jwt

from parley.protocol import InternalError, UnauthenticatedError
from parley.server._auth import Check, Credentials
from parley.server._card import CardError
from parley.server._context import Principal
from parley.server._verifiers import check_bearer_scheme
from parley.types import OAuth2SecurityScheme, OpenIdConnectSecurityScheme, SecurityScheme

logger = logging.getLogger("parley.server.auth")

DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")


class KeySet:
    """Signing keys from a JWKS URL or a discovery document, cached and refreshed."""

    def __init__(
        self,
        *,
        jwks_url: str | None = None,
        discovery_url: str | None = None,
        cache_seconds: float = 600.0,
        refresh_interval: float = 10.0,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.jwks_url = jwks_url
        self.discovery_url = discovery_url
        self.issuer: str | None = None
        self.cache_seconds = cache_seconds
        self.refresh_interval = refresh_interval
        self.http_client = http_client
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._fetched = -float("inf")
        self._lock = asyncio.Lock()

    async def key(self, key_id: str | None) -> jwt.PyJWK:
        """The key ``key_id`` names (the only key, for a token without ``kid``)."""
        if time.monotonic() - self._fetched > self.cache_seconds:
            await self._refresh(self._fetched)
        found = self._find(key_id)
        if found is None and time.monotonic() - self._fetched > self.refresh_interval:
            await self._refresh(self._fetched)  # a key we do not know yet: rotated?
            found = self._find(key_id)
        if found is None:
            raise UnauthenticatedError(
                "The bearer token is signed with a key this agent does not know"
            )
        return found

    def _find(self, key_id: str | None) -> jwt.PyJWK | None:
        if key_id is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return self._keys.get(key_id)

    async def _refresh(self, seen: float) -> None:
        async with self._lock:
            if self._fetched != seen:
                return  # another call refreshed while this one waited
            try:
                keys = await self._fetch()
            except (httpx.HTTPError, ValueError, jwt.PyJWTError) as error:
                logger.warning("could not fetch the token signing keys: %s", error)
                if not self._keys:
                    raise InternalError(
                        "The agent could not fetch the keys to check the token; try again later"
                    ) from None
                self._fetched = time.monotonic() - self.cache_seconds + self.refresh_interval
                return
            self._keys = keys
            self._fetched = time.monotonic()

    async def _fetch(self) -> dict[str | None, jwt.PyJWK]:
        client = self.http_client or httpx.AsyncClient(timeout=10.0)
        try:
            jwks_url = self.jwks_url
            if self.discovery_url is not None:
                document = await _get_json(client, self.discovery_url)
                jwks_url = document.get("jwks_uri")
                self.issuer = document.get("issuer")
                if not isinstance(jwks_url, str):
                    raise ValueError(f"{self.discovery_url} names no jwks_uri")
            assert jwks_url is not None
            keys = jwt.PyJWKSet.from_dict(await _get_json(client, jwks_url)).keys
        finally:
            if client is not self.http_client:
                await client.aclose()
        return {key.key_id: key for key in keys}


async def _get_json(client: httpx.AsyncClient, url: str) -> dict[str, Any]:
    response = await client.get(url)
    response.raise_for_status()
    document = response.json()
    if not isinstance(document, dict):
        raise ValueError(f"{url} did not answer a JSON object")
    return document


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
            jwks_url=self.jwks_url,
            discovery_url=discovery,
            cache_seconds=self.cache_seconds,
            http_client=self.http_client,
        )

    async def decode(self, token: str, keys: KeySet | None) -> dict[str, Any]:
        """The verified claims of ``token``; raises ``UnauthenticatedError`` saying why not."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise UnauthenticatedError("The bearer token is not a JWT") from None
        key = self.key if keys is None else await keys.key(header.get("kid"))
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
