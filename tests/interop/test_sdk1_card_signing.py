"""a2a-sdk 1.3's own verifier accepts the card parley signs (v1.0.1 §8.4): it reads the
card into the v1.0 model and canonicalizes that, so the card is signed over the v1.0
form of each version's card, whether the SDK asks for v1.0 (``A2A-Version: 1.0``, as
its clients do) or asks no version and reads the v0.3 card into v1.0's shape."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from parley.server import APIKeyVerifier, SigningKeys, create_app
from parley.types import APIKeySecurityScheme
from tests.interop.agents import extended_card, interop, interop_card
from tests.interop.sdk import run_peer
from tests.servers import running


def _pem(key: ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey) -> bytes:
    data: bytes = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return data


KEYS = {
    "ES256": _pem(ec.generate_private_key(ec.SECP256R1())),
    "EdDSA": _pem(ed25519.Ed25519PrivateKey.generate()),
}


@pytest.mark.parametrize("secured", [False, True], ids=["open", "api-key"])
@pytest.mark.parametrize("algorithm", sorted(KEYS))
def test_the_sdk_verifies_the_signed_card(sdk1: Path, algorithm: str, secured: bool) -> None:
    card = interop_card()
    security = None
    if secured:  # security in both versions' forms, a requirement with no scopes
        scheme = APIKeySecurityScheme(name="X-API-Key", in_="header")
        card = card.model_copy(
            update={"security_schemes": {"apiKey": scheme}, "security": [{"apiKey": []}]}
        )
        security = {"apiKey": APIKeyVerifier({"alice": "secret"})}
    app = create_app(
        interop,
        card,
        extended_card=extended_card(),
        signing_keys=SigningKeys.from_pem(KEYS[algorithm]),
        security=security,
    )
    with running(app) as url:
        lines = run_peer(sdk1, "sdk1_card_verifier.py", "--url", url)
    assert [line["asked"] for line in lines] == [None, "1.0"]
    for line in lines:
        assert line["verified"], line
        assert line["name"] == "parley interop agent"
