"""Authentication: the card's security requirements, checked before any operation runs
(spec 4.4, 5.5.3 ``security``/``securitySchemes``).

The card's ``security`` is a list of alternatives; a call passes when every scheme of one
alternative accepts its credentials and the principal holds the scopes that alternative
lists. Each scheme the card names is checked by a *verifier* the operator gives
(``APIKeyVerifier``, ``BasicVerifier``, ``TokenVerifier``, ``JWTVerifier``,
``ClientCertificateVerifier``, or any object with a ``bind`` method). ``Authenticator``
binds them to their schemes once, at start-up, and is called by the ASGI layer in front
of the HTTP bindings and by the gRPC interceptor, so every binding answers the same:
``UnauthenticatedError`` (401, ``UNAUTHENTICATED``) for missing or refused credentials,
``PermissionDeniedError`` (403, ``PERMISSION_DENIED``) for valid ones without the scopes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from functools import cached_property
from http.cookies import CookieError, SimpleCookie
from typing import Protocol
from urllib.parse import parse_qsl

from parley.protocol import PermissionDeniedError, UnauthenticatedError
from parley.server.agent._card_error import CardError
from parley.server.agent._context import Principal
from parley.types import (
    AgentCard,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    SecurityScheme,
)


class MissingCredentials(UnauthenticatedError):
    """The call carries no credential for a scheme (as opposed to a refused one); the
    message says what to send ("an API key in header X-API-Key")."""


class Credentials:
    """What a call carries that may authenticate it, whatever the binding: headers (or
    gRPC metadata) with lower-case names, the query string, cookies, and the client
    certificate the TLS layer verified (PEM). gRPC has no query string: its metadata
    stands in for it (an API key ``in: query`` is read from metadata of that name)."""

    def __init__(
        self,
        headers: Mapping[str, str],
        query_string: str = "",
        client_certificate: bytes | None = None,
        *,
        query: Mapping[str, str] | None = None,
    ) -> None:
        self.headers = headers
        self.query_string = query_string
        self.client_certificate = client_certificate
        if query is not None:
            self.query = query

    @cached_property
    def query(self) -> Mapping[str, str]:
        return dict(parse_qsl(self.query_string))

    @cached_property
    def cookies(self) -> dict[str, str]:
        cookie = SimpleCookie()
        try:
            cookie.load(self.headers.get("cookie", ""))
        except CookieError:
            return {}
        return {name: morsel.value for name, morsel in cookie.items()}

    def authorization(self, scheme: str) -> str:
        """The credentials of the ``Authorization: <scheme> ...`` header; raises
        ``MissingCredentials`` when there is none for ``scheme``."""
        header = self.headers.get("authorization", "")
        kind, _, value = header.partition(" ")
        if kind.lower() != scheme.lower() or not value.strip():
            raise MissingCredentials(f"{scheme} credentials in the Authorization header")
        return value.strip()


Check = Callable[[Credentials], Awaitable[Principal]]
"""A verifier bound to one scheme: the principal of a call's credentials. Raises
``MissingCredentials`` when the call has none for the scheme, ``UnauthenticatedError``
when it refuses them."""


class SchemeVerifier(Protocol):
    """Checks the credentials of one kind of security scheme."""

    def bind(self, name: str, scheme: SecurityScheme) -> Check:
        """The check for the card's scheme ``name``; raises ``CardError`` when this
        verifier cannot check that kind of scheme."""
        ...

    def challenge(self, name: str, scheme: SecurityScheme) -> str:
        """The ``WWW-Authenticate`` challenge (RFC 7235) for the scheme."""
        ...


Requirement = list[tuple[str, Check, frozenset[str]]]

ANONYMOUS = Principal(name="anonymous", scheme="")
"""Who a call is when the card's ``security`` allows it in with no credentials (``{}``):
its tasks are shared by every anonymous caller and hidden from everyone else."""


class Authenticator:
    """Evaluates the card's security requirements for each call.

    ``verifiers`` maps each scheme name of the card's ``securitySchemes`` that
    ``security`` uses to its verifier. Raises ``CardError`` at construction when a
    requirement names a scheme the card does not declare or no verifier checks.
    """

    def __init__(self, card: AgentCard, verifiers: Mapping[str, SchemeVerifier]) -> None:
        if not card.security:
            raise CardError("security verifiers were given, but the card declares no security")
        schemes = card.security_schemes or {}
        checks: dict[str, Check] = {}
        challenges: dict[str, str] = {}
        for requirement in card.security:
            for name in requirement:
                if name not in schemes:
                    raise CardError(f"security names {name!r}, which securitySchemes lacks")
                if name not in verifiers:
                    raise CardError(f"security scheme {name!r} has no verifier")
                if name not in checks:
                    checks[name] = verifiers[name].bind(name, schemes[name])
                    challenges[name] = verifiers[name].challenge(name, schemes[name])
        self.requirements: list[Requirement] = [
            [(name, checks[name], frozenset(scopes)) for name, scopes in requirement.items()]
            for requirement in sorted(card.security, key=lambda requirement: not requirement)
        ]
        self.www_authenticate = ", ".join(dict.fromkeys(challenges.values()))
        """The challenges of every scheme, for a 401's ``WWW-Authenticate``."""

    async def authenticate(self, credentials: Credentials) -> Principal:
        """The principal of the first requirement the call satisfies.

        Raises ``UnauthenticatedError`` when none accepts its credentials, or
        ``PermissionDeniedError`` when one does but the principal lacks its scopes.
        """
        seen: dict[str, Principal | UnauthenticatedError] = {}
        missing: list[str] = []
        refused: UnauthenticatedError | None = None
        denied: PermissionDeniedError | None = None
        for requirement in self.requirements:
            principals: list[Principal] = []
            for name, check, scopes in requirement:
                outcome = seen.get(name)
                if outcome is None:
                    outcome = seen[name] = await _outcome(check, credentials)
                if isinstance(outcome, MissingCredentials):
                    missing.append(outcome.message)
                    break
                if isinstance(outcome, UnauthenticatedError):
                    refused = refused or outcome
                    break
                lacking = scopes - outcome.scopes
                if lacking:
                    denied = denied or PermissionDeniedError(
                        f"{outcome.name} lacks the scope {', '.join(sorted(lacking))} "
                        f"that {name} requires here"
                    )
                    break
                principals.append(outcome)
            else:
                if principals:
                    return principals[0]
                # an empty requirement ({}, tried last) lets in a caller who sent no
                # credentials, as the anonymous principal; refused ones stay refused
                if refused is None:
                    return ANONYMOUS
        if denied is not None:
            raise denied
        if refused is not None:
            raise refused
        wanted = " or ".join(dict.fromkeys(missing))
        raise UnauthenticatedError(f"This agent requires authentication: send {wanted}")


async def _outcome(check: Check, credentials: Credentials) -> Principal | UnauthenticatedError:
    try:
        return await check(credentials)
    except UnauthenticatedError as error:
        return error


def card_challenge(card: AgentCard) -> str:
    """The ``WWW-Authenticate`` challenges (RFC 7235) of the schemes ``card`` declares:
    those its ``security`` names, else every one of ``securitySchemes`` (``""``: none).
    What a 401 carries when no verifier is there to say it, e.g. when the extended card's
    function refuses a caller of an agent whose card requires nothing."""
    schemes = card.security_schemes or {}
    named = [name for requirement in card.security or () for name in requirement]
    challenges = [scheme_challenge(schemes[name]) for name in named or schemes if name in schemes]
    return ", ".join(dict.fromkeys(challenges))


def scheme_challenge(scheme: SecurityScheme) -> str:
    """The challenge of one security scheme, as its verifiers give it."""
    if isinstance(scheme, APIKeySecurityScheme):
        return f'APIKey realm="a2a", in="{scheme.in_}", name="{scheme.name}"'
    if isinstance(scheme, HTTPAuthSecurityScheme):
        return f'{scheme.scheme.capitalize()} realm="a2a"'
    if isinstance(scheme, MutualTLSSecurityScheme):
        return 'MutualTLS realm="a2a"'
    return 'Bearer realm="a2a"'  # oauth2 and openIdConnect: bearer tokens
