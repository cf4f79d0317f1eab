"""The credential options every command that talks to an agent takes, beyond
``--bearer``, ``--api-key`` and ``-H``: HTTP basic, OAuth 2.0 client credentials and a
client certificate (mutual TLS); see docs/security.md."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from parley.client import BasicAuth, ClientInterceptor, ClientTLS, OAuth2ClientCredentials

BasicOption = Annotated[
    str | None,
    typer.Option("--basic", envvar="PARLEY_BASIC", metavar="USER:PASSWORD", help="HTTP basic."),
]
OAuthOption = Annotated[
    str | None,
    typer.Option(
        "--oauth",
        envvar="PARLEY_OAUTH_CLIENT",
        metavar="CLIENT_ID:SECRET",
        help="Get an OAuth 2.0 token (client credentials) from the card's token URL, or "
        "--token-url.",
    ),
]
TokenURLOption = Annotated[
    str | None, typer.Option("--token-url", help="OAuth 2.0 token endpoint for --oauth.")
]
ScopeOption = Annotated[
    list[str] | None, typer.Option("--scope", help="Scope to ask --oauth for (repeatable).")
]
CertOption = Annotated[
    Path | None, typer.Option("--cert", help="PEM client certificate (mutual TLS).")
]
KeyOption = Annotated[Path | None, typer.Option("--key", help="PEM private key of --cert.")]
CAOption = Annotated[
    Path | None, typer.Option("--ca", help="PEM CAs to trust instead of the system's.")
]


@dataclass(frozen=True)
class MoreCredentials:
    """What ``--basic``, ``--oauth`` (with ``--token-url``, ``--scope``), ``--cert``,
    ``--key`` and ``--ca`` ask for; raises ``ValueError`` saying which is malformed."""

    basic: str | None = None
    oauth: str | None = None
    token_url: str | None = None
    scopes: tuple[str, ...] = ()
    cert: Path | None = None
    key: Path | None = None
    ca: Path | None = None

    def interceptors(self) -> list[ClientInterceptor]:
        found: list[ClientInterceptor] = []
        if self.basic:
            user, sep, password = self.basic.partition(":")
            if not sep:
                raise ValueError("--basic takes USER:PASSWORD")
            found.append(BasicAuth(user, password))
        if self.oauth:
            client_id, sep, secret = self.oauth.partition(":")
            if not sep:
                raise ValueError("--oauth takes CLIENT_ID:SECRET")
            found.append(
                OAuth2ClientCredentials(
                    client_id, secret, token_url=self.token_url, scopes=self.scopes
                )
            )
        return found

    def tls(self) -> ClientTLS | None:
        if self.key is not None and self.cert is None:
            raise ValueError("--key goes with --cert")
        if self.cert is None and self.ca is None:
            return None
        return ClientTLS(certificate=self.cert, key=self.key, ca=self.ca)
