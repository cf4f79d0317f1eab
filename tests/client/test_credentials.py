"""Client credentials for every scheme against real servers (spec 4.3: credentials in
HTTP headers or gRPC metadata; 5.5.3 schemes): HTTP basic, OAuth 2.0 client credentials
with a token endpoint on 127.0.0.1 (fetched, reused, fetched again after a refusal), and
mutual TLS with ClientTLS on HTTPS and gRPC."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from parley.client import BasicAuth, ClientTLS, OAuth2ClientCredentials, connect
from parley.protocol import UnauthenticatedError
from parley.server import (
    AgentContext,
    BasicVerifier,
    ClientCertificateVerifier,
    GRPCOptions,
    JWTVerifier,
    TLSHTTPProtocol,
    agent,
    create_app,
)
from parley.types import (
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    Task,
)
from tests.server.agents import card
from tests.server.auth import AUDIENCE, SigningKey, make_certificates
from tests.servers import running


@agent
async def whoami(ctx: AgentContext) -> str:
    principal = ctx.request.call.principal
    return "nobody" if principal is None else principal.name


def _text(result: Any) -> str:
    assert isinstance(result, Task)
    assert result.artifacts
    return str(getattr(result.artifacts[0].parts[0], "text", ""))


async def test_basic_auth() -> None:
    agent_card = card(
        security_schemes={"basic": HTTPAuthSecurityScheme(scheme="basic")},
        security=[{"basic": []}],
    )
    app = create_app(whoami, agent_card, security={"basic": BasicVerifier({"ann": "pw"})})
    async with connect(app, interceptors=[BasicAuth("ann", "pw")]) as client:
        assert _text(await client.send_message("hi")) == "ann"
    with pytest.raises(UnauthenticatedError):
        async with connect(app, interceptors=[BasicAuth("ann", "nope")]) as client:
            await client.send_message("hi")


class TokenEndpoint:
    """An OAuth 2.0 token endpoint: the client credentials grant, JWT access tokens."""

    def __init__(self) -> None:
        self.key = SigningKey("t1")
        self.issuer = ""
        self.issued = 0
        self.lifetime = 300

    def app(self) -> Starlette:
        async def token(request: Request) -> JSONResponse:
            form = dict(parse_qsl((await request.body()).decode()))  # no multipart dependency
            if request.headers.get("authorization") != _basic("svc", "s3cret"):
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            assert form["grant_type"] == "client_credentials"
            self.issued += 1
            access = self.key.token(self.issuer, sub="svc", scope=str(form.get("scope", "")))
            body = {"access_token": access, "token_type": "Bearer"}
            return JSONResponse({**body, "expires_in": self.lifetime})

        async def jwks(request: Request) -> JSONResponse:
            return JSONResponse({"keys": [self.key.jwk()]})

        return Starlette(
            routes=[Route("/token", token, methods=["POST"]), Route("/jwks.json", jwks)]
        )


def _basic(user: str, password: str) -> str:
    import base64

    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.fixture(scope="module")
def endpoint() -> Iterator[TokenEndpoint]:
    token_endpoint = TokenEndpoint()
    with running(token_endpoint.app()) as url:
        token_endpoint.issuer = url
        yield token_endpoint


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_oauth2_client_credentials(endpoint: TokenEndpoint, binding: str) -> None:
    """The token URL comes from the card's client credentials flow; the token is fetched
    once and reused for later calls."""
    scheme = OAuth2SecurityScheme(
        flows=OAuthFlows(
            client_credentials=ClientCredentialsOAuthFlow(
                token_url=f"{endpoint.issuer}/token", scopes={"tasks": "use tasks"}
            )
        )
    )
    agent_card = card(security_schemes={"oauth": scheme}, security=[{"oauth": ["tasks"]}])
    verifier = JWTVerifier(
        jwks_url=f"{endpoint.issuer}/jwks.json", issuer=endpoint.issuer, audience=AUDIENCE
    )
    app = create_app(
        whoami,
        agent_card,
        grpc=GRPCOptions(host="127.0.0.1", port=0),
        security={"oauth": verifier},
    )
    credentials = OAuth2ClientCredentials("svc", "s3cret", scopes=["tasks"])
    before = endpoint.issued
    with running(app) as base:
        async with connect(base, transports=[binding], interceptors=[credentials]) as client:
            assert _text(await client.send_message("hi")) == "svc"
            assert _text(await client.send_message("again")) == "svc"
            assert endpoint.issued == before + 1
    wrong = OAuth2ClientCredentials("svc", "wrong", token_url=f"{endpoint.issuer}/token")
    with pytest.raises(UnauthenticatedError, match="invalid_client"):
        await wrong.token()


async def test_mutual_tls_with_client_tls(tmp_path: Path) -> None:
    """ClientTLS presents the client certificate over HTTPS (JSON-RPC, HTTP+JSON) and
    gRPC alike; without it the agent refuses."""
    certificates = make_certificates(tmp_path)
    agent_card = card(security_schemes={"mtls": MutualTLSSecurityScheme()}, security=[{"mtls": []}])
    grpc_options = GRPCOptions(
        host="127.0.0.1",
        port=0,
        certificate_chain=certificates.server_cert.read_bytes(),
        private_key=certificates.server_key.read_bytes(),
        client_ca=certificates.ca,
    )
    app = create_app(
        whoami, agent_card, grpc=grpc_options, security={"mtls": ClientCertificateVerifier()}
    )
    tls = {
        "ssl_certfile": str(certificates.server_cert),
        "ssl_keyfile": str(certificates.server_key),
        "ssl_ca_certs": str(certificates.ca_file),
        "ssl_cert_reqs": ssl.CERT_OPTIONAL,
        "http": TLSHTTPProtocol,
    }
    cert, key = certificates.client("alice")
    client_tls = ClientTLS(certificate=cert, key=key, ca=certificates.ca_file)
    with running(app, **tls) as base:
        for binding in ("JSONRPC", "HTTP+JSON", "GRPC"):
            async with connect(base, transports=[binding], tls=client_tls) as client:
                assert _text(await client.send_message("hi")) == "alice", binding
        anonymous = ClientTLS(ca=certificates.ca_file)
        async with connect(base, transports=["JSONRPC"], tls=anonymous) as client:
            with pytest.raises(UnauthenticatedError, match="client certificate"):
                await client.send_message("hi")
