"""The agent's signing key set and its JWKS at /.well-known/jwks.json."""

from __future__ import annotations

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from parley.server import SigningKeys, create_app
from tests.server.agents import ScriptedAgent, card


def _pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def test_a_signature_names_its_key_and_verifies_with_the_published_set() -> None:
    keys = SigningKeys.generate()
    token = keys.sign({"hello": "world"})
    header = jwt.get_unverified_header(token)
    assert header["kid"] == keys.current.kid
    assert header["alg"] == "ES256"
    published = jwt.PyJWKSet.from_dict(keys.jwks)[keys.current.kid]
    assert jwt.decode(token, published.key, algorithms=["ES256"]) == {"hello": "world"}


def test_the_published_set_holds_public_halves_only() -> None:
    for jwk in SigningKeys.generate().jwks["keys"]:
        assert "d" not in jwk
        assert jwk["use"] == "sig"


@pytest.mark.parametrize(
    ("key", "algorithm"),
    [
        (ec.generate_private_key(ec.SECP384R1()), "ES384"),
        (rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256"),
        (ed25519.Ed25519PrivateKey.generate(), "EdDSA"),
    ],
)
def test_pem_keys_of_each_kind_sign_and_keep_their_kid(
    key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey,
    algorithm: str,
) -> None:
    first, again = SigningKeys.from_pem(_pem(key)), SigningKeys.from_pem(_pem(key).decode())
    assert first.current.kid == again.current.kid  # the thumbprint: same key, same kid
    assert first.current.algorithm == algorithm
    token = first.sign({"n": 1})
    public = jwt.PyJWKSet.from_dict(again.jwks)[first.current.kid]
    assert jwt.decode(token, public.key, algorithms=[algorithm]) == {"n": 1}


def test_rotation_publishes_the_old_key_and_signs_with_the_new() -> None:
    old, new = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    before = SigningKeys.from_pem(_pem(old))
    during = SigningKeys.from_pem(_pem(new), _pem(old))
    assert jwt.get_unverified_header(during.sign({}))["kid"] != before.current.kid
    assert {jwk["kid"] for jwk in during.jwks["keys"]} == {
        before.current.kid,
        during.current.kid,
    }


def test_a_key_set_refuses_nothing_and_twins() -> None:
    with pytest.raises(ValueError, match="at least one"):
        SigningKeys([])
    key = SigningKeys.generate().current
    with pytest.raises(ValueError, match="share a kid"):
        SigningKeys([key, key])


async def test_the_app_serves_its_keys_at_the_well_known_path() -> None:
    keys = SigningKeys.generate()
    app = create_app(ScriptedAgent(), card(), signing_keys=keys)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        response = await http.get("/.well-known/jwks.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/jwk-set+json")
    assert response.json() == keys.jwks
