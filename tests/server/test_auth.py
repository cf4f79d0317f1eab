"""Every security scheme enforced on every binding (spec 4.4, 5.5.3, 7.10), against real
servers: uvicorn with the gRPC server beside it, a JWKS and discovery server on
127.0.0.1, tokens signed in the test."""

from __future__ import annotations

import base64
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.client import (
    AgentUnreachableError,
    ClientCall,
    ClientConfig,
    ClientFactory,
    ClientInterceptor,
    connect,
    user_message,
)
from parley.protocol import InternalError, PermissionDeniedError, UnauthenticatedError
from parley.server import (
    AgentContext,
    APIKeyVerifier,
    BasicVerifier,
    ClientCertificateVerifier,
    GRPCOptions,
    JWTVerifier,
    Principal,
    SchemeVerifier,
    TLSHTTPProtocol,
    TokenVerifier,
    agent,
    create_app,
)
from parley.types import (
    AgentCard,
    APIKeySecurityScheme,
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    Message,
    MessageSendParams,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityScheme,
    Task,
)
from tests.bindings.conftest import BINDINGS
from tests.server.agents import card
from tests.server.auth import (
    AUDIENCE,
    Certificates,
    IdentityProvider,
    identity_provider,
    make_certificates,
)
from tests.servers import listening_socket, running


@agent
async def whoami(ctx: AgentContext) -> str:
    """Answers with who is calling, as the executor sees it (spec 4.4: the principal)."""
    principal = ctx.request.call.principal
    if principal is None:
        return "nobody"
    return f"{principal.name} via {principal.scheme} scopes={','.join(sorted(principal.scopes))}"


class Credentials(ClientInterceptor):
    """Puts raw credentials on every call: headers and query parameters."""

    def __init__(self, headers: dict[str, str] | None = None, query: dict[str, str] | None = None):
        self.headers = headers or {}
        self.query = query or {}

    async def before(self, call: ClientCall) -> None:
        call.context.headers.update(self.headers)
        call.context.query.update(self.query)


def bearer(token: str) -> Credentials:
    return Credentials({"Authorization": f"Bearer {token}"})


def basic(user: str, password: str) -> Credentials:
    encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
    return Credentials({"Authorization": f"Basic {encoded}"})


@dataclass
class Scheme:
    """One scheme under test: how the card declares it, who verifies it, and which
    credentials are accepted (with the principal they stand for) or refused."""

    declared: SecurityScheme
    verifier: Callable[[IdentityProvider], SchemeVerifier]
    scopes: list[str] = field(default_factory=list)
    accepted: Callable[[IdentityProvider], tuple[Credentials, str]] | None = None
    refused: dict[str, Callable[[IdentityProvider], Credentials]] = field(default_factory=dict)
    denied: Callable[[IdentityProvider], Credentials] | None = None


async def _opaque(token: str) -> Principal | None:
    if token == "opaque-good":
        return Principal(name="svc", scheme="scheme", scopes=frozenset({"tasks"}))
    return None


SCHEMES: dict[str, Scheme] = {
    "apikey-header": Scheme(
        APIKeySecurityScheme(name="X-API-Key", in_="header"),
        lambda idp: APIKeyVerifier({"alice": "k-alice", "bob": "k-bob"}),
        accepted=lambda idp: (Credentials({"X-API-Key": "k-bob"}), "bob via scheme scopes="),
        refused={"wrong key": lambda idp: Credentials({"X-API-Key": "k-carol"})},
    ),
    "apikey-query": Scheme(
        APIKeySecurityScheme(name="api_key", in_="query"),
        lambda idp: APIKeyVerifier({"alice": "k-alice"}),
        accepted=lambda idp: (
            Credentials(query={"api_key": "k-alice"}),
            "alice via scheme scopes=",
        ),
        refused={"wrong key": lambda idp: Credentials(query={"api_key": "nope"})},
    ),
    "apikey-cookie": Scheme(
        APIKeySecurityScheme(name="session", in_="cookie"),
        lambda idp: APIKeyVerifier({"alice": "k-alice"}),
        accepted=lambda idp: (
            Credentials({"Cookie": "a=1; session=k-alice"}),
            "alice via scheme scopes=",
        ),
        refused={"wrong key": lambda idp: Credentials({"Cookie": "session=k-bob"})},
    ),
    "basic": Scheme(
        HTTPAuthSecurityScheme(scheme="basic"),
        lambda idp: BasicVerifier({"alice": "wonderland"}),
        accepted=lambda idp: (basic("alice", "wonderland"), "alice via scheme scopes="),
        refused={
            "wrong password": lambda idp: basic("alice", "looking-glass"),
            "unknown user": lambda idp: basic("carol", "wonderland"),
            "not base64": lambda idp: Credentials({"Authorization": "Basic !!!"}),
        },
    ),
    "bearer-jwt": Scheme(
        HTTPAuthSecurityScheme(scheme="bearer", bearer_format="JWT"),
        lambda idp: JWTVerifier(
            jwks_url=f"{idp.issuer}/jwks.json", issuer=idp.issuer, audience=AUDIENCE
        ),
        accepted=lambda idp: (bearer(idp.token(scope="a b")), "alice via scheme scopes=a,b"),
        refused={
            "expired": lambda idp: bearer(idp.token(exp=1_000_000, iat=999_000)),
            "wrong audience": lambda idp: bearer(idp.token(aud="https://other.example")),
            "wrong issuer": lambda idp: bearer(idp.token(iss="https://evil.example")),
            "unknown key": lambda idp: bearer(_foreign_token(idp)),
            "not a JWT": lambda idp: bearer("garbage"),
            "basic instead": lambda idp: basic("alice", "x"),
        },
    ),
    "oauth2": Scheme(
        OAuth2SecurityScheme(
            flows=OAuthFlows(
                client_credentials=ClientCredentialsOAuthFlow(
                    token_url="https://idp.example/token", scopes={"tasks": "use tasks"}
                )
            ),
        ),
        lambda idp: JWTVerifier(discovery_url=idp.discovery_url, audience=AUDIENCE),
        scopes=["tasks"],
        accepted=lambda idp: (
            bearer(idp.token(scp=["tasks", "x"])),
            "alice via scheme scopes=tasks,x",
        ),
        refused={"wrong audience": lambda idp: bearer(idp.token(aud="nope", scope="tasks"))},
        denied=lambda idp: bearer(idp.token(scope="other")),
    ),
    "openid": Scheme(
        OpenIdConnectSecurityScheme(open_id_connect_url="set per provider"),
        lambda idp: JWTVerifier(audience=AUDIENCE),
        accepted=lambda idp: (bearer(idp.token()), "alice via scheme scopes="),
        refused={"expired": lambda idp: bearer(idp.token(exp=1_000_000, iat=999_000))},
    ),
    "opaque-token": Scheme(
        HTTPAuthSecurityScheme(scheme="bearer"),
        lambda idp: TokenVerifier(_opaque),
        scopes=["tasks"],
        accepted=lambda idp: (bearer("opaque-good"), "svc via scheme scopes=tasks"),
        refused={"unknown token": lambda idp: bearer("opaque-bad")},
    ),
}


def _foreign_token(idp: IdentityProvider) -> str:
    from tests.server.auth import SigningKey

    return SigningKey("elsewhere").token(idp.issuer)


def _secured_card(scheme: Scheme, idp: IdentityProvider) -> AgentCard:
    declared = scheme.declared
    if isinstance(declared, OpenIdConnectSecurityScheme):
        declared = declared.model_copy(update={"open_id_connect_url": idp.discovery_url})
    return card(
        security_schemes={"scheme": declared},
        security=[{"scheme": scheme.scopes}],
        supports_authenticated_extended_card=True,
    )


class Agent:
    def __init__(self, base: str, idp: IdentityProvider, scheme: Scheme) -> None:
        self.base = base
        self.idp = idp
        self.scheme = scheme


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    with identity_provider() as provider:
        yield provider


@pytest.fixture(scope="module", params=sorted(SCHEMES))
def secured(request: pytest.FixtureRequest, idp: IdentityProvider) -> Iterator[Agent]:
    scheme = SCHEMES[request.param]
    agent_card = _secured_card(scheme, idp)

    async def extended(call: Any) -> AgentCard:  # depends on who asks (spec 5.5)
        # a gRPC call has no base URL to complete an empty url with
        url = call.base_url or "http://agent.example/"
        return agent_card.model_copy(
            update={"description": f"for {call.principal.name}", "url": url}
        )

    app = create_app(
        whoami,
        agent_card,
        extended_card=extended,
        grpc=GRPCOptions(host="127.0.0.1", port=0),
        security={"scheme": scheme.verifier(idp)},
    )
    with running(app) as base:
        yield Agent(base, idp, scheme)


async def _ask(secured: Agent, binding: str, credentials: Credentials | None) -> Task | Message:
    interceptors = [credentials] if credentials is not None else []
    config = ClientConfig(transports=[binding], interceptors=interceptors, extended_card=False)
    async with await ClientFactory(config).connect(secured.base) as client:
        return await client.send_message("who am I?")


def _answer(result: Task | Message) -> str:
    assert isinstance(result, Task)
    assert result.artifacts
    part = result.artifacts[0].parts[0]
    return str(getattr(part, "text", ""))


@pytest.mark.parametrize("binding", BINDINGS)
async def test_valid_credentials_name_the_principal(secured: Agent, binding: str) -> None:
    """Spec 4.4: an authenticated call runs, and the agent sees who is calling."""
    assert secured.scheme.accepted is not None
    credentials, principal = secured.scheme.accepted(secured.idp)
    assert _answer(await _ask(secured, binding, credentials)) == principal


@pytest.mark.parametrize("binding", BINDINGS)
async def test_no_credentials_are_refused(secured: Agent, binding: str) -> None:
    """Spec 4.4: a call without credentials is refused (401 / UNAUTHENTICATED)."""
    with pytest.raises(UnauthenticatedError, match="requires authentication"):
        await _ask(secured, binding, None)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_wrong_credentials_are_refused(secured: Agent, binding: str) -> None:
    """Spec 4.4: wrong, expired, foreign or malformed credentials are refused."""
    for reason, make in secured.scheme.refused.items():
        with pytest.raises(UnauthenticatedError) as refused:
            await _ask(secured, binding, make(secured.idp))
        assert "requires authentication" not in refused.value.message or reason == "basic instead"


SCOPED = sorted(name for name, scheme in SCHEMES.items() if scheme.denied is not None)


@pytest.mark.parametrize("secured", SCOPED, indirect=True)
@pytest.mark.parametrize("binding", BINDINGS)
async def test_insufficient_scopes_are_denied(secured: Agent, binding: str) -> None:
    """Spec 4.5: valid credentials without the requirement's scopes: 403 / PERMISSION_DENIED."""
    assert secured.scheme.denied is not None
    with pytest.raises(PermissionDeniedError, match="lacks the scope tasks"):
        await _ask(secured, binding, secured.scheme.denied(secured.idp))


@pytest.mark.parametrize("binding", BINDINGS)
async def test_extended_card_needs_authentication(secured: Agent, binding: str) -> None:
    """Spec 7.10: the extended card is for authenticated callers, and may depend on them;
    the public card stays public."""
    async with httpx.AsyncClient() as http:
        public = await http.get(f"{secured.base}/.well-known/agent-card.json")
    assert public.status_code == 200
    assert secured.scheme.accepted is not None
    credentials, principal = secured.scheme.accepted(secured.idp)
    config = ClientConfig(transports=[binding], interceptors=[credentials], extended_card=False)
    async with await ClientFactory(config).connect(secured.base) as client:
        extended = await client.get_extended_card()
    assert extended.description == f"for {principal.split(' via ')[0]}"
    anonymous = ClientConfig(transports=[binding], extended_card=False)
    async with await ClientFactory(anonymous).connect(secured.base) as client:
        with pytest.raises(UnauthenticatedError):
            await client.get_extended_card()


async def test_http_refusals_carry_www_authenticate(secured: Agent) -> None:
    """RFC 7235 / spec 4.4: 401 with WWW-Authenticate on both HTTP bindings; JSON-RPC
    answers with a JSON-RPC error body."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}}
    async with httpx.AsyncClient() as http:
        rpc = await http.post(f"{secured.base}/", json=body)
        rest = await http.get(f"{secured.base}/v1/tasks/x")
    for answer in (rpc, rest):
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"]
    assert rpc.json()["error"]["code"] == UnauthenticatedError.code
    assert rest.json()["code"] == UnauthenticatedError.code


def _mtls_app(certificates: Certificates) -> Any:
    agent_card = card(security_schemes={"mtls": MutualTLSSecurityScheme()}, security=[{"mtls": []}])
    grpc_options = GRPCOptions(
        host="127.0.0.1",
        port=0,
        certificate_chain=certificates.server_cert.read_bytes(),
        private_key=certificates.server_key.read_bytes(),
        client_ca=certificates.ca,
    )
    verifier = ClientCertificateVerifier()
    return create_app(whoami, agent_card, grpc=grpc_options, security={"mtls": verifier})


async def _mtls_http(base: str, certificates: Certificates, name: str | None) -> httpx.Response:
    context = ssl.create_default_context(cafile=str(certificates.ca_file))
    if name is not None:
        cert, key = certificates.client(name)
        context.load_cert_chain(str(cert), str(key))
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {
                "role": "user",
                "messageId": "m1",
                "parts": [{"kind": "text", "text": "hi"}],
            }
        },
    }
    async with httpx.AsyncClient(verify=context) as http:
        return await http.post(f"{base}/", json=body)


async def _mtls_grpc(port: int, certificates: Certificates, name: str | None) -> str:
    import grpc

    from parley.client.transports._grpc import GRPCTransport

    key = cert = None
    if name is not None:
        cert_file, key_file = certificates.client(name)
        cert, key = cert_file.read_bytes(), key_file.read_bytes()
    credentials = grpc.ssl_channel_credentials(certificates.ca, key, cert)
    channel = grpc.aio.secure_channel(f"127.0.0.1:{port}", credentials)
    try:
        transport = GRPCTransport(f"127.0.0.1:{port}", channel=channel)
        params = MessageSendParams(message=user_message("hi"))
        from parley.client import ClientCallContext
        from parley.protocol import BY_NAME

        result = await transport.request(BY_NAME["send_message"], params, ClientCallContext())
        return _answer(result)
    finally:
        await channel.close(None)


async def test_mutual_tls_on_https_and_grpc(tmp_path: Path) -> None:
    """Spec 4.4, 5.5.3 (MutualTLSSecurityScheme): the client certificate, verified by the
    TLS handshake against the client CA, names the caller on HTTPS and on gRPC; a caller
    without one is refused (401 on HTTPS, in the handshake on gRPC); one from another CA
    does not get through the handshake."""
    certificates = make_certificates(tmp_path)
    app = _mtls_app(certificates)
    tls = {
        "ssl_certfile": str(certificates.server_cert),
        "ssl_keyfile": str(certificates.server_key),
        "ssl_ca_certs": str(certificates.ca_file),
        "ssl_cert_reqs": ssl.CERT_OPTIONAL,
        "http": TLSHTTPProtocol,
    }
    with running(app, **tls) as base:
        accepted = await _mtls_http(base, certificates, "alice")
        assert accepted.status_code == 200
        assert accepted.json()["result"]["artifacts"][0]["parts"][0]["text"].startswith(
            "alice via mtls"
        )
        anonymous = await _mtls_http(base, certificates, None)
        assert anonymous.status_code == 401
        assert "client certificate" in anonymous.json()["error"]["message"]
        with pytest.raises(httpx.HTTPError):  # refused in the handshake
            await _mtls_http(base, certificates, "stranger")
        port = app.grpc_port
        assert port is not None
        assert (await _mtls_grpc(port, certificates, "alice")).startswith("alice via mtls")
        for refused in (None, "stranger"):  # grpc's TLS refuses both in the handshake
            with pytest.raises(AgentUnreachableError):
                await _mtls_grpc(port, certificates, refused)


async def test_an_empty_requirement_lets_anonymous_callers_in() -> None:
    """OpenAPI's optional security (``{}`` among the alternatives): no credentials is the
    anonymous principal, wrong ones are still refused."""
    agent_card = card(
        security_schemes={"key": APIKeySecurityScheme(name="X-API-Key", in_="header")},
        security=[{"key": []}, {}],
    )
    app = create_app(whoami, agent_card, security={"key": APIKeyVerifier({"ann": "k"})})
    async with connect(app) as client:
        assert _answer(await client.send_message("hi")) == "anonymous via  scopes="
    async with connect(app, interceptors=[Credentials({"X-API-Key": "k"})]) as client:
        assert _answer(await client.send_message("hi")) == "ann via key scopes="
    async with connect(app, interceptors=[Credentials({"X-API-Key": "bad"})]) as client:
        with pytest.raises(UnauthenticatedError):
            await client.send_message("hi")


async def test_keys_that_cannot_be_fetched_are_the_agents_failure(idp: IdentityProvider) -> None:
    """A JWKS URL that refuses connections: a call with a well-made token gets -32603
    saying to try again (the agent's failure), not 401 (the caller's)."""
    down = listening_socket()  # bound, not listening: connections are refused
    scheme = SCHEMES["bearer-jwt"]
    verifier = JWTVerifier(
        jwks_url=f"http://127.0.0.1:{down.getsockname()[1]}/jwks.json",
        issuer=idp.issuer,
        audience=AUDIENCE,
    )
    agent_card = _secured_card(scheme, idp).model_copy(
        update={"supports_authenticated_extended_card": False}
    )
    app = create_app(whoami, agent_card, security={"scheme": verifier})
    with running(app) as base:
        config = ClientConfig(interceptors=[bearer(idp.token())], extended_card=False)
        async with await ClientFactory(config).connect(base) as client:
            with pytest.raises(InternalError, match="could not fetch the keys"):
                await client.send_message("who am I?")
    down.close()
