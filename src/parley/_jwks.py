"""Public keys fetched from a JWKS and kept: the one place parley fetches and caches a
key set.

Sits below ``parley.server`` and ``parley.client`` (on nothing of parley's), since both
fetch key sets: the client an agent's (``parley.client.AgentKeys``: push notifications,
card signatures), the server an identity provider's (``JWTVerifier``: bearer tokens).
``protocol`` below them does no I/O, so this fetch lives here. Its failures are its own
two exceptions, which each side turns into its errors at its one boundary: the client
into ``ClientError`` / ``KeyNotFoundError``, the server into ``UnauthenticatedError`` /
``InternalError``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import httpx
import jwt

logger = logging.getLogger("parley.keys")
"""Neither ``parley.client`` nor ``parley.server``: both fetch key sets through here."""

REFRESH_AT_MOST_EVERY = 30.0
"""Seconds: an unknown ``kid`` refetches the set, but not more often than this."""


class KeysUnavailable(Exception):
    """No key set could be fetched (``message`` says from where and why)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnknownKey(KeysUnavailable):
    """The key set has no key with the ``kid`` asked for."""


class KeySet:
    """Public keys by ``kid``: see ``parley.client.AgentKeys`` for the contract; ``key``
    raises ``UnknownKey`` or ``KeysUnavailable`` where ``AgentKeys.key`` raises
    ``KeyNotFoundError`` or ``ClientError``."""

    def __init__(
        self,
        url: str | None = None,
        *,
        jwks: Mapping[str, Any] | None = None,
        http: httpx.AsyncClient | None = None,
        discovery_url: str | None = None,
        max_age: float | None = None,
        refresh_every: float = REFRESH_AT_MOST_EVERY,
    ) -> None:
        if (url is None and discovery_url is None) == (jwks is None):
            raise ValueError("give the JWKS url (or a discovery url) or the JWKS itself")
        self.url = url
        self.discovery_url = discovery_url
        self.issuer: str | None = None
        self.max_age = max_age
        self.refresh_every = refresh_every
        self._http = http
        self._keys: dict[str, jwt.PyJWK] = {} if jwks is None else _parse(jwks)
        self._fetched = float("-inf")
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> jwt.PyJWK:
        """The key named ``kid`` (``None``: the only key of a set of one). Raises
        ``UnknownKey``, or ``KeysUnavailable`` when no key set could be fetched."""
        fetches = self.url is not None or self.discovery_url is not None
        age = time.monotonic() - self._fetched
        if fetches and self.max_age is not None and age > self.max_age:
            await self._refresh(self._fetched)
        found = self._find(kid)
        if found is None and fetches and time.monotonic() - self._fetched > self.refresh_every:
            await self._refresh(self._fetched)  # a key not seen yet: rotated?
            found = self._find(kid)
        if found is None:
            where = f"the key set at {self.url or self.discovery_url}" if fetches else "the key set"
            raise UnknownKey(f"no key with kid {kid!r} in {where}")
        return found

    def _find(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def _refresh(self, seen: float) -> None:
        async with self._lock:
            if self._fetched != seen:
                return  # another call refreshed while this one waited
            try:
                self._keys = await self._fetch()
            except KeysUnavailable as error:
                if not self._keys:
                    raise
                logger.warning("%s; the keys fetched before are kept", error.message)
                # tried again in refresh_every seconds, for a new kid or once too old
                aged = 0.0 if self.max_age is None else self.max_age - self.refresh_every
                self._fetched = time.monotonic() - aged
                return
            self._fetched = time.monotonic()

    async def _fetch(self) -> dict[str, jwt.PyJWK]:
        url = self.url or self.discovery_url
        try:
            if self._http is not None:
                return await self._read(self._http)
            async with httpx.AsyncClient(timeout=10.0) as http:
                return await self._read(http)
        except (httpx.HTTPError, ValueError) as exc:
            raise KeysUnavailable(f"could not fetch the keys from {url}: {exc}") from exc

    async def _read(self, http: httpx.AsyncClient) -> dict[str, jwt.PyJWK]:
        url = self.url
        if self.discovery_url is not None:
            document = await _get_json(http, self.discovery_url)
            url, self.issuer = document.get("jwks_uri"), document.get("issuer")
            if not isinstance(url, str):
                raise ValueError(f"{self.discovery_url} names no jwks_uri")
        assert url is not None
        return _parse(await _get_json(http, url))


async def _get_json(http: httpx.AsyncClient, url: str) -> dict[str, Any]:
    response = await http.get(url)
    response.raise_for_status()
    document = json.loads(response.content)
    if not isinstance(document, dict):
        raise ValueError(f"{url} did not answer a JSON object")
    return document


def _parse(jwks: Mapping[str, Any]) -> dict[str, jwt.PyJWK]:
    try:
        keys = jwt.PyJWKSet.from_dict(dict(jwks)).keys
    except jwt.PyJWTError as exc:
        raise ValueError(f"not a usable JWKS: {exc}") from exc
    return {key.key_id or "": key for key in keys}  # "": the one key a token without kid may use
