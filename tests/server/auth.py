"""What the authentication tests need, made in the test: signing keys and tokens, a JWKS
and discovery server on 127.0.0.1, a certificate authority with server and client
certificates."""

from __future__ import annotations

import datetime
import ipaddress
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.servers import running

AUDIENCE = "https://agent.example"


class SigningKey:
    """An RSA key with a key id, its public JWK, and tokens it signs."""

    def __init__(self, key_id: str) -> None:
        self.key_id = key_id
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwk(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key()))
        return {**public, "kid": self.key_id, "use": "sig", "alg": "RS256"}

    def token(self, issuer: str, **claims: Any) -> str:
        now = int(time.time())
        payload = {"sub": "alice", "iss": issuer, "aud": AUDIENCE, "iat": now, "exp": now + 300}
        payload.update(claims)
        payload = {name: value for name, value in payload.items() if value is not None}
        return jwt.encode(payload, self.private, algorithm="RS256", headers={"kid": self.key_id})


class IdentityProvider:
    """An OpenID provider on 127.0.0.1: discovery document and JWKS, keys swappable."""

    def __init__(self) -> None:
        self.keys = [SigningKey("k1")]
        self.issuer = ""
        self.jwks_fetches = 0

    def app(self) -> Starlette:
        async def discovery(request: Request) -> JSONResponse:
            return JSONResponse({"issuer": self.issuer, "jwks_uri": f"{self.issuer}/jwks.json"})

        async def jwks(request: Request) -> JSONResponse:
            self.jwks_fetches += 1
            return JSONResponse({"keys": [key.jwk() for key in self.keys]})

        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", discovery),
                Route("/jwks.json", jwks),
            ]
        )

    @property
    def discovery_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def token(self, **claims: Any) -> str:
        return self.keys[0].token(self.issuer, **claims)


@contextmanager
def identity_provider() -> Iterator[IdentityProvider]:
    provider = IdentityProvider()
    with running(provider.app()) as url:
        provider.issuer = url
        yield provider


@dataclass
class Certificates:
    """PEM files of a CA, a server certificate for 127.0.0.1, and client certificates."""

    folder: Path
    ca: bytes
    server_cert: Path
    server_key: Path

    @property
    def ca_file(self) -> Path:
        return self.folder / "ca.pem"

    def client(self, name: str) -> tuple[Path, Path]:
        return self.folder / f"{name}.pem", self.folder / f"{name}.key"


def _pem_key(key: Any) -> bytes:
    data: bytes = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return data


def _certificate(
    subject: str,
    key: Any,
    issuer: tuple[str, Any] | None,
    *,
    ca: bool = False,
    server: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer if issuer else (subject, key)
    # Python 3.13's ssl verifies with VERIFY_X509_STRICT by default, which rejects a chain
    # lacking the key identifiers or a CA lacking key usage (RFC 5280 4.2.1.1-3): make
    # certificates as a real CA would, so the tests pass on every Python parley supports.
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(_key_usage(ca), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
            critical=False,
        )
    )
    if not ca:
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _key_usage(ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not ca,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )


def make_certificates(folder: Path, clients: tuple[str, ...] = ("alice",)) -> Certificates:
    """A CA, a server certificate for 127.0.0.1 and a client certificate per name (each
    named by its common name); plus ``stranger``, a client certificate of another CA."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("parley test CA", ca_key, None, ca=True)
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _certificate("127.0.0.1", server_key, ("parley test CA", ca_key), server=True)
    (folder / "server.pem").write_bytes(server.public_bytes(serialization.Encoding.PEM))
    (folder / "server.key").write_bytes(_pem_key(server_key))
    other_key = ec.generate_private_key(ec.SECP256R1())
    for name, issuer in [
        *((name, ("parley test CA", ca_key)) for name in clients),
        ("stranger", ("another CA", other_key)),
    ]:
        key = ec.generate_private_key(ec.SECP256R1())
        certificate = _certificate(name, key, issuer)
        (folder / f"{name}.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        (folder / f"{name}.key").write_bytes(_pem_key(key))
    return Certificates(
        folder,
        ca.public_bytes(serialization.Encoding.PEM),
        folder / "server.pem",
        folder / "server.key",
    )
