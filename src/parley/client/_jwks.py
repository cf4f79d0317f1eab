"""Public keys fetched from a JWKS and kept: an agent's, to check what it signed (push
notifications, cards). The fetch and cache are ``parley._jwks``'s (the server's
``JWTVerifier`` fetches an identity provider's keys with it too); this is the client's
face of it, raising the client's errors.
"""

from __future__ import annotations

import httpx
import jwt

from parley._jwks import KeySet, KeysUnavailable, UnknownKey
from parley.client._errors import ClientError


class KeyNotFoundError(ClientError):
    """The agent's key set has no key with the ``kid`` a signature names."""


class AgentKeys(KeySet):
    """Public keys by ``kid``: from a JWKS URL, or the ``jwks_uri`` of a discovery
    document (OpenID Connect discovery, RFC 8414 metadata: its ``issuer`` is kept in
    ``issuer``), fetched on first use and again when a signature names a ``kid`` not yet
    seen (as after a key rotation, at most every ``refresh_every`` seconds) or the keys
    are older than ``max_age``; or from a JWKS given as a mapping
    (``AgentKeys(jwks={"keys": [...]})``).

    A refetch that fails keeps the keys fetched before (and is tried again after
    ``refresh_every``); only with none does ``key`` raise ``ClientError``.
    """

    @classmethod
    def of_agent(cls, base_url: str, *, http: httpx.AsyncClient | None = None) -> AgentKeys:
        """The keys an agent at ``base_url`` publishes at ``/.well-known/jwks.json``."""
        return cls(f"{base_url.rstrip('/')}/.well-known/jwks.json", http=http)

    async def key(self, kid: str | None) -> jwt.PyJWK:
        """The key named ``kid`` (``None``: the only key of a set of one). Raises
        ``KeyNotFoundError``, or ``ClientError`` when no key set could be fetched."""
        try:
            return await super().key(kid)
        except UnknownKey as error:
            raise KeyNotFoundError(error.message) from None
        except KeysUnavailable as error:
            raise ClientError(error.message) from error.__cause__
