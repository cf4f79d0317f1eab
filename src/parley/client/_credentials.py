"""Client credentials beyond a fixed header: HTTP basic, OAuth 2.0 client credentials
(RFC 6749 section 4.4; the token fetched, cached and fetched again before it expires), and
the client certificate of mutual TLS (``ClientTLS``, for the HTTP client and gRPC alike).
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from parley.client._errors import ClientError
from parley.client._interceptors import ClientCall, ClientInterceptor
from parley.protocol import UnauthenticatedError
from parley.types import AgentCard, OAuth2SecurityScheme


class BasicAuth(ClientInterceptor):
    """Sends ``Authorization: Basic`` (RFC 7617) with every call."""

    def __init__(self, user: str, password: str) -> None:
        encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
        self.header = f"Basic {encoded}"

    async def before(self, call: ClientCall) -> None:
        call.context.headers["Authorization"] = self.header


class OAuth2ClientCredentials(ClientInterceptor):
    """Gets an access token with the OAuth 2.0 client credentials grant and sends it as a
    bearer token; fetches a new one shortly before it expires (``expires_in``), or after
    the agent refused it once.

    ``token_url`` defaults to the ``tokenUrl`` of the card's first ``oauth2`` scheme with a
    client credentials flow. The client authenticates to the token endpoint with HTTP
    basic (RFC 6749 2.3.1); ``scopes`` and ``audience`` go in the token request.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        token_url: str | None = None,
        scopes: Sequence[str] = (),
        audience: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        early: float = 30.0,
    ) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.token_url = token_url
        self.scopes = tuple(scopes)
        self.audience = audience
        self.http_client = http_client
        self.early = early
        self._token: str | None = None
        self._expires = 0.0
        self._lock = asyncio.Lock()

    async def before(self, call: ClientCall) -> None:
        call.context.headers["Authorization"] = f"Bearer {await self.token(call.card)}"

    async def failed(self, call: ClientCall, error: Exception) -> None:
        if isinstance(error, UnauthenticatedError):
            self._expires = 0.0  # refused: the next call fetches a new token

    async def token(self, card: AgentCard | None = None) -> str:
        """The current access token, fetched when there is none or it is about to expire."""
        seen = self._expires
        if self._token is not None and time.monotonic() < self._expires:
            return self._token
        async with self._lock:
            if self._token is None or self._expires == seen:
                await self._fetch(self._token_url(card))
        assert self._token is not None
        return self._token

    def _token_url(self, card: AgentCard | None) -> str:
        if self.token_url is not None:
            return self.token_url
        for scheme in (card.security_schemes or {}).values() if card else ():
            if isinstance(scheme, OAuth2SecurityScheme) and scheme.flows.client_credentials:
                return scheme.flows.client_credentials.token_url
        raise ClientError("no token_url given, and the card has no oauth2 client credentials flow")

    async def _fetch(self, url: str) -> None:
        form = {"grant_type": "client_credentials"}
        if self.scopes:
            form["scope"] = " ".join(self.scopes)
        if self.audience:
            form["audience"] = self.audience
        http = self.http_client or httpx.AsyncClient(timeout=10.0)
        try:
            response = await http.post(url, data=form, auth=(self.client_id, self.client_secret))
            answer: Any = response.json() if response.content else {}
        except (httpx.HTTPError, ValueError) as error:
            raise ClientError(f"the token request to {url} failed: {error}") from None
        finally:
            if http is not self.http_client:
                await http.aclose()
        if response.status_code != 200 or not isinstance(answer, dict):
            reason = answer.get("error") if isinstance(answer, dict) else None
            raise UnauthenticatedError(
                f"the token endpoint {url} refused the client credentials "
                f"(HTTP {response.status_code}{f', {reason}' if reason else ''})"
            )
        token = answer.get("access_token")
        if not isinstance(token, str):
            raise ClientError(f"the token endpoint {url} answered without an access_token")
        lifetime = answer.get("expires_in")
        seconds = float(lifetime) if isinstance(lifetime, int | float) else 3600.0
        self._token = token
        self._expires = time.monotonic() + max(seconds - self.early, 0.0)


@dataclass(frozen=True)
class ClientTLS:
    """TLS settings of a client: ``certificate`` and ``key`` (PEM files) present a client
    certificate (mutual TLS); ``ca`` (a PEM file) replaces the system's trusted CAs."""

    certificate: Path | str | None = None
    key: Path | str | None = None
    ca: Path | str | None = None

    def ssl_context(self) -> ssl.SSLContext:
        """An ``ssl.SSLContext`` for ``httpx.AsyncClient(verify=...)``."""
        context = ssl.create_default_context(cafile=str(self.ca) if self.ca else None)
        if self.certificate is not None:
            context.load_cert_chain(str(self.certificate), str(self.key) if self.key else None)
        return context

    def grpc_credentials(self) -> tuple[bytes | None, bytes | None, bytes | None]:
        """``(root certificates, private key, certificate chain)`` for gRPC's
        ``ssl_channel_credentials``."""
        return (
            Path(self.ca).read_bytes() if self.ca else None,
            Path(self.key).read_bytes() if self.key else None,
            Path(self.certificate).read_bytes() if self.certificate else None,
        )
