"""Verifiers of the schemes that need no token machinery: API keys, HTTP basic, opaque
bearer tokens, and client certificates (mutual TLS). JWTs are in ``_jwt``.

Secrets given to a verifier are kept only as SHA-256 digests, looked up by digest or
compared with ``hmac.compare_digest``, so checking a key takes the same time whichever
key it is and however much of it is right.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from parley.protocol import UnauthenticatedError
from parley.server.agent._card_error import CardError
from parley.server.agent._context import Principal
from parley.server.auth._auth import Check, Credentials, MissingCredentials
from parley.types import (
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityScheme,
)

Found = Principal | str | None
"""What a user's check function answers: a principal, just its name, or ``None`` to refuse."""


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def principal_of(found: Found, scheme_name: str) -> Principal | None:
    """The principal a check function's answer stands for (a name becomes a principal of
    ``scheme_name`` with no scopes)."""
    if found is None or isinstance(found, Principal):
        return found
    return Principal(name=found, scheme=scheme_name)


def wrong_kind(name: str, scheme: SecurityScheme, verifier: object, checks: str) -> CardError:
    kind = scheme.type if not isinstance(scheme, HTTPAuthSecurityScheme) else scheme.scheme
    return CardError(f"security scheme {name!r} is {kind}; {type(verifier).__name__} {checks}")


class APIKeyVerifier:
    """Checks the API key of an ``apiKey`` scheme, read where the scheme says (header,
    query parameter or cookie, by its ``name``).

    ``keys`` maps each principal's name to its key; or ``check`` (an async function of
    the key) answers a ``Principal``, a name, or ``None`` for a key it refuses.
    """

    def __init__(
        self,
        keys: Mapping[str, str] | None = None,
        *,
        check: Callable[[str], Awaitable[Found]] | None = None,
    ) -> None:
        if (keys is None) == (check is None):
            raise ValueError("give APIKeyVerifier either keys or check")
        self._names = {_digest(key): name for name, key in (keys or {}).items()}
        self._check = check

    def bind(self, name: str, scheme: SecurityScheme) -> Check:
        if not isinstance(scheme, APIKeySecurityScheme):
            raise wrong_kind(name, scheme, self, "checks apiKey schemes")
        where, field = scheme.in_, scheme.name
        header = field.lower()
        place = f"{where} {field}"

        async def check(credentials: Credentials) -> Principal:
            if where == "header":
                key = credentials.headers.get(header)
            elif where == "query":
                key = credentials.query.get(field)
            else:
                key = credentials.cookies.get(field)
            if not key:
                raise MissingCredentials(f"an API key in {place}")
            principal = await self._principal(key, name)
            if principal is None:
                raise UnauthenticatedError(f"The API key in {place} is not valid")
            return principal

        return check

    async def _principal(self, key: str, scheme_name: str) -> Principal | None:
        if self._check is not None:
            return principal_of(await self._check(key), scheme_name)
        found = self._names.get(_digest(key))
        return None if found is None else Principal(name=found, scheme=scheme_name)

    def challenge(self, name: str, scheme: SecurityScheme) -> str:
        assert isinstance(scheme, APIKeySecurityScheme)
        return f'APIKey realm="a2a", in="{scheme.in_}", name="{scheme.name}"'


class BasicVerifier:
    """Checks ``Authorization: Basic`` of an ``http`` scheme whose ``scheme`` is ``basic``.

    ``users`` maps each user name to its password; or ``check`` (an async function of
    user name and password) answers a ``Principal``, a name, or ``None`` to refuse.
    """

    def __init__(
        self,
        users: Mapping[str, str] | None = None,
        *,
        check: Callable[[str, str], Awaitable[Found]] | None = None,
    ) -> None:
        if (users is None) == (check is None):
            raise ValueError("give BasicVerifier either users or check")
        self._passwords = {user: _digest(password) for user, password in (users or {}).items()}
        self._check = check
        self._nobody = _digest("")

    def bind(self, name: str, scheme: SecurityScheme) -> Check:
        if not (isinstance(scheme, HTTPAuthSecurityScheme) and scheme.scheme.lower() == "basic"):
            raise wrong_kind(name, scheme, self, "checks http basic schemes")

        async def check(credentials: Credentials) -> Principal:
            encoded = credentials.authorization("Basic")
            try:
                user, sep, password = (
                    base64.b64decode(encoded, validate=True).decode().partition(":")
                )
            except (binascii.Error, UnicodeDecodeError):
                sep = ""
            if not sep:
                raise UnauthenticatedError("The Basic credentials are not base64 of user:password")
            principal = await self._principal(user, password, name)
            if principal is None:
                raise UnauthenticatedError("The user name or password is wrong")
            return principal

        return check

    async def _principal(self, user: str, password: str, scheme_name: str) -> Principal | None:
        if self._check is not None:
            return principal_of(await self._check(user, password), scheme_name)
        expected = self._passwords.get(user, self._nobody)
        matches = hmac.compare_digest(expected, _digest(password))
        return (
            Principal(name=user, scheme=scheme_name)
            if matches and user in self._passwords
            else None
        )

    def challenge(self, name: str, scheme: SecurityScheme) -> str:
        return 'Basic realm="a2a", charset="UTF-8"'


class TokenVerifier:
    """Checks an opaque bearer token (``Authorization: Bearer``) with ``check``, an async
    function of the token that answers a ``Principal`` (with its scopes), a name, or
    ``None`` to refuse. For ``http`` bearer, ``oauth2`` and ``openIdConnect`` schemes whose
    tokens are not JWTs (e.g. checked by token introspection, RFC 7662)."""

    def __init__(self, check: Callable[[str], Awaitable[Found]]) -> None:
        self._check = check

    def bind(self, name: str, scheme: SecurityScheme) -> Check:
        check_bearer_scheme(name, scheme, self)

        async def check(credentials: Credentials) -> Principal:
            token = credentials.authorization("Bearer")
            principal = principal_of(await self._check(token), name)
            if principal is None:
                raise UnauthenticatedError("The bearer token is not valid")
            return principal

        return check

    def challenge(self, name: str, scheme: SecurityScheme) -> str:
        return 'Bearer realm="a2a"'


def check_bearer_scheme(name: str, scheme: SecurityScheme, verifier: object) -> None:
    """Refuse to bind a bearer-token verifier to a scheme that takes no bearer token."""
    if isinstance(scheme, OAuth2SecurityScheme | OpenIdConnectSecurityScheme):
        return
    if isinstance(scheme, HTTPAuthSecurityScheme) and scheme.scheme.lower() == "bearer":
        return
    raise wrong_kind(name, scheme, verifier, "checks http bearer, oauth2 and openIdConnect schemes")


class ClientCertificateVerifier:
    """Names the caller of a ``mutualTLS`` scheme by its client certificate.

    The TLS layer has already verified the certificate against the server's client CA
    (uvicorn's ``ssl_ca_certs`` with ``parley.server.TLSHTTPProtocol``; ``GRPCOptions``'
    ``client_ca``); a call without one is refused. The principal is the certificate's
    subject common name, or what ``check`` (a function of the
    ``cryptography.x509.Certificate``) answers.
    """

    def __init__(self, check: Callable[[Any], Awaitable[Found]] | None = None) -> None:
        self._check = check

    def bind(self, name: str, scheme: SecurityScheme) -> Check:
        if not isinstance(scheme, MutualTLSSecurityScheme):
            raise wrong_kind(name, scheme, self, "checks mutualTLS schemes")
        from cryptography import x509
        from cryptography.x509.oid import NameOID

        async def check(credentials: Credentials) -> Principal:
            pem = credentials.client_certificate
            if pem is None:
                raise MissingCredentials("a client certificate (mutual TLS)")
            certificate = x509.load_pem_x509_certificate(pem)
            if self._check is not None:
                principal = principal_of(await self._check(certificate), name)
                if principal is None:
                    raise UnauthenticatedError("The client certificate is not accepted")
                return principal
            common_names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
            subject = certificate.subject.rfc4514_string()
            cn = common_names[0].value if common_names else subject
            claims = {"subject": subject, "serial_number": certificate.serial_number}
            return Principal(name=str(cn), scheme=name, claims=claims)

        return check

    def challenge(self, name: str, scheme: SecurityScheme) -> str:
        return 'MutualTLS realm="a2a"'
