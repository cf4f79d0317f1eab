"""An agent's public keys, fetched from its JWKS and kept, for checking what it signed."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any

import httpx
import jwt

from parley.client._errors import ClientError

REFRESH_AT_MOST_EVERY = 30.0
"""Seconds: an unknown ``kid`` refetches the set, but not more often than this."""


class KeyNotFoundError(ClientError):
    """The agent's key set has no key with the ``kid`` a signature names."""


class AgentKeys:
    """The public keys of an agent, by ``kid``: from a JWKS URL (fetched on first use and
    again when a signature names a ``kid`` not yet seen, as after a key rotation), or
    from a JWKS given as a mapping (``AgentKeys(jwks={"keys": [...]})``).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        jwks: Mapping[str, Any] | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        if (url is None) == (jwks is None):
            raise ValueError("give the JWKS url or the JWKS itself, not both")
        self.url = url
        self._http = http
        self._keys: dict[str, jwt.PyJWK] = {} if jwks is None else _parse(jwks)
        self._fetched = float("-inf")
        self._lock = asyncio.Lock()

    @classmethod
    def of_agent(cls, base_url: str, *, http: httpx.AsyncClient | None = None) -> AgentKeys:
        """The keys an agent at ``base_url`` publishes at ``/.well-known/jwks.json``."""
        return cls(f"{base_url.rstrip('/')}/.well-known/jwks.json", http=http)

    async def key(self, kid: str) -> jwt.PyJWK:
        """The key named ``kid``. Raises ``KeyNotFoundError``, or ``ClientError`` when
        the key set cannot be fetched."""
        found = self._keys.get(kid)
        if found is not None or self.url is None:
            if found is None:
                raise KeyNotFoundError(f"no key with kid {kid!r} in the given key set")
            return found
        async with self._lock:
            if kid not in self._keys and time.monotonic() - self._fetched > REFRESH_AT_MOST_EVERY:
                self._keys = await self._fetch(self.url)
                self._fetched = time.monotonic()
        found = self._keys.get(kid)
        if found is None:
            raise KeyNotFoundError(f"no key with kid {kid!r} in the agent's key set at {self.url}")
        return found

    async def _fetch(self, url: str) -> dict[str, jwt.PyJWK]:
        try:
            if self._http is not None:
                response = await self._http.get(url)
            else:
                async with httpx.AsyncClient(timeout=10.0) as http:
                    response = await http.get(url)
            response.raise_for_status()
            return _parse(json.loads(response.content))
        except (httpx.HTTPError, ValueError) as exc:
            raise ClientError(f"could not fetch the agent's keys from {url}: {exc}") from exc


def _parse(jwks: Mapping[str, Any]) -> dict[str, jwt.PyJWK]:
    try:
        keys = jwt.PyJWKSet.from_dict(dict(jwks)).keys
    except jwt.PyJWTError as exc:
        raise ValueError(f"not a usable JWKS: {exc}") from exc
    return {key.key_id: key for key in keys if key.key_id}
