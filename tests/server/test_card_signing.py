"""Signed agent cards (spec 5.5 ``signatures``; docs/security.md "Signed cards"): a JWS
over the card's RFC 8785 form, made with the app's signing key; verified by the client
against trusted keys under a policy; one changed byte fails; keys rotate."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from parley.client import AgentKeys, CardError, CardVerifier, connect
from parley.server import SigningKeys, create_app
from tests.server.agents import ScriptedAgent, card


def _pem(key: Any) -> bytes:
    data: bytes = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return data


OLD = _pem(ec.generate_private_key(ec.SECP256R1()))
NEW = _pem(ed25519.Ed25519PrivateKey.generate())


async def _served_card(keys: SigningKeys | None, **options: Any) -> dict[str, Any]:
    app = create_app(
        ScriptedAgent(), card(url="https://agent.example/"), signing_keys=keys, **options
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://agent.example") as http:
        answer: dict[str, Any] = (await http.get("/.well-known/agent-card.json")).json()
    return answer


async def test_a_card_signed_with_the_operators_key_verifies() -> None:
    keys = SigningKeys.from_pem(OLD)
    served = await _served_card(keys)
    # over the card as served, and over the v1.0 card a v1.0 reader makes of it
    assert len(served["signatures"]) == 2
    for signature in served["signatures"]:
        header = json.loads(_b64(signature["protected"]))
        assert header == {"alg": "ES256", "kid": keys.current.kid, "typ": "JOSE"}
    result = await CardVerifier(AgentKeys(jwks=keys.jwks)).verify(served)
    assert (result.status, result.key_id) == ("verified", keys.current.kid)


@pytest.mark.parametrize("field", ["description", "url", "name"])
async def test_one_changed_byte_fails(field: str) -> None:
    keys = SigningKeys.from_pem(OLD)
    served = await _served_card(keys)
    value = served[field]
    served[field] = value[:-1] + chr(ord(value[-1]) ^ 1)
    with pytest.raises(CardError, match="does not verify"):
        await CardVerifier(AgentKeys(jwks=keys.jwks)).verify(served)


async def test_key_rotation() -> None:
    """The new key signs, both are published; a client trusting the published set
    verifies; one that trusts only the old key refuses the newly signed card."""
    old = SigningKeys.from_pem(OLD)
    rotated = SigningKeys.from_pem(NEW, OLD)
    served = await _served_card(rotated)
    result = await CardVerifier(AgentKeys(jwks=rotated.jwks)).verify(served)
    assert result.key_id == rotated.current.kid != old.current.kid
    assert json.loads(_b64(served["signatures"][0]["protected"]))["alg"] == "EdDSA"
    with pytest.raises(CardError, match="does not verify"):
        await CardVerifier(AgentKeys(jwks=old.jwks)).verify(served)


async def test_policies() -> None:
    """off: not looked at; if-present: an unsigned card passes, a bad one does not;
    require: an unsigned card is refused."""
    unsigned = await _served_card(None)
    assert "signatures" not in unsigned
    keys = AgentKeys(jwks=SigningKeys.from_pem(OLD).jwks)
    assert (await CardVerifier(None, "off").verify(unsigned)).status == "not checked"
    assert (await CardVerifier(keys, "if-present").verify(unsigned)).status == "unsigned"
    with pytest.raises(CardError, match="not signed"):
        await CardVerifier(keys, "require").verify(unsigned)
    foreign = await _served_card(SigningKeys.from_pem(NEW))
    with pytest.raises(CardError):
        await CardVerifier(keys, "if-present").verify(foreign)


async def test_connect_checks_the_card_before_use() -> None:
    keys = SigningKeys.from_pem(OLD)
    app = create_app(ScriptedAgent(), card(), signing_keys=keys)
    trusted = CardVerifier(AgentKeys(jwks=keys.jwks))
    async with connect(app, card_verifier=trusted) as client:
        assert (await client.send_message("echo hi")).kind == "task"
    assert trusted.last is not None
    assert trusted.last.status == "verified"
    stranger = CardVerifier(AgentKeys(jwks=SigningKeys.from_pem(NEW).jwks))
    with pytest.raises(CardError, match="does not verify"):
        async with connect(app, card_verifier=stranger):
            pass


def _b64(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
