"""The agent's signing keys: one set per app, published at ``/.well-known/jwks.json``.

Whatever the agent signs (push notifications; agent cards) is signed with the *current*
key, the first of the set, and names it by ``kid`` in the JWS header. Every key of the set
is published, so a key being rotated out still verifies what it signed. A key's ``kid``
is its RFC 7638 thumbprint unless one is given, so the same key file gives the same
``kid`` in every process.

Processes that serve one agent together (several workers, several hosts) must share the
key: load it from a PEM file (``SigningKeys.from_pem``, ``parley serve --signing-key``);
a generated key lives only as long as its process.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey

_CURVES = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}
_THUMBPRINT_MEMBERS = {
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
    "OKP": ("crv", "kty", "x"),
}


@dataclass(frozen=True, slots=True)
class SigningKey:
    """One private key with its ``kid`` and JWS algorithm."""

    kid: str
    algorithm: str
    """``ES256``/``ES384``/``ES512`` (EC), ``RS256`` (RSA) or ``EdDSA`` (Ed25519)."""
    private_key: PrivateKey

    def public_jwk(self) -> dict[str, Any]:
        """The public half as a JWK, with ``kid``, ``alg`` and ``use``."""
        return {
            **_public_jwk(self.private_key),
            "kid": self.kid,
            "alg": self.algorithm,
            "use": "sig",
        }


class SigningKeys:
    """The set of keys an agent signs with; the first one signs, all are published.

    Raises ``ValueError`` when empty, or when two keys share a ``kid``.
    """

    def __init__(self, keys: Sequence[SigningKey]) -> None:
        if not keys:
            raise ValueError("a key set needs at least one key")
        kids = [key.kid for key in keys]
        if len(set(kids)) != len(kids):
            raise ValueError(f"two keys share a kid: {kids}")
        self.keys = tuple(keys)
        self.jwks = {"keys": [key.public_jwk() for key in self.keys]}
        self.jwks_json = json.dumps(self.jwks, separators=(",", ":")).encode()

    @property
    def current(self) -> SigningKey:
        """The key new signatures are made with."""
        return self.keys[0]

    @classmethod
    def generate(cls) -> SigningKeys:
        """A set of one fresh P-256 key (``ES256``), for one process."""
        return cls([key_of(ec.generate_private_key(ec.SECP256R1()))])

    @classmethod
    def from_pem(cls, *pems: bytes | str, password: bytes | None = None) -> SigningKeys:
        """A set of the private keys in PEM form, the first one current.

        Raises ``ValueError`` for something that is not a supported private key."""
        keys = []
        for pem in pems:
            data = pem.encode() if isinstance(pem, str) else pem
            loaded = serialization.load_pem_private_key(data, password=password)
            if not isinstance(loaded, PrivateKey):
                raise ValueError(
                    f"unsupported key type {type(loaded).__name__}: use EC, RSA or Ed25519"
                )
            keys.append(key_of(loaded))
        return cls(keys)

    def sign(self, claims: Mapping[str, Any], headers: Mapping[str, Any] | None = None) -> str:
        """A compact JWT of ``claims`` signed with the current key, ``kid`` in its header."""
        key = self.current
        return jwt.encode(
            dict(claims),
            key.private_key,
            algorithm=key.algorithm,
            headers={**(headers or {}), "kid": key.kid},
        )


def key_of(private_key: PrivateKey, kid: str | None = None) -> SigningKey:
    """``private_key`` as a ``SigningKey``; its ``kid`` is its thumbprint unless given."""
    if isinstance(private_key, ec.EllipticCurvePrivateKey):
        curve = _public_jwk(private_key)["crv"]
        if curve not in _CURVES:
            raise ValueError(f"unsupported curve {curve}: use P-256, P-384 or P-521")
        algorithm = _CURVES[curve]
    elif isinstance(private_key, rsa.RSAPrivateKey):
        algorithm = "RS256"
    else:
        algorithm = "EdDSA"
    return SigningKey(kid or thumbprint(_public_jwk(private_key)), algorithm, private_key)


def thumbprint(jwk: Mapping[str, Any]) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK, base64url without padding."""
    members = {name: jwk[name] for name in _THUMBPRINT_MEMBERS[jwk["kty"]]}
    digest = hashlib.sha256(json.dumps(members, separators=(",", ":"), sort_keys=True).encode())
    return jwt.utils.base64url_encode(digest.digest()).decode()


def _public_jwk(private_key: PrivateKey) -> dict[str, Any]:
    public = private_key.public_key()
    if isinstance(public, ec.EllipticCurvePublicKey):
        return dict(ECAlgorithm.to_jwk(public, as_dict=True))
    if isinstance(public, rsa.RSAPublicKey):
        return dict(RSAAlgorithm.to_jwk(public, as_dict=True))
    return dict(OKPAlgorithm.to_jwk(public, as_dict=True))
