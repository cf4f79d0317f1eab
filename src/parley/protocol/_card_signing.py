"""Agent card signatures (spec 5.5 ``signatures``): a JWS (RFC 7515) over the card.

The payload is the card's JSON without ``signatures``, in the canonical form of RFC 8785
(JCS: sorted keys, no spaces, one spelling per number), so any party that holds the same
card computes the same bytes. Readers differ in what they hold: v1.0.1 §8.4.1 keeps the
card as written (every member present in it, empty ones included), while the official
SDK leaves out empty strings, lists and objects before canonicalizing. Both are
canonical forms of the card (``canonical_forms``): a card is signed over each (once when
they are the same) and verifies over either.

Each signature is the JSON serialisation of a JWS with a detached payload (RFC 7515
appendix F): ``protected`` (base64url of the header: ``alg``, ``kid``, ``typ``) and
``signature``; the payload is the card itself. A card may carry several, e.g. by the old
and the new key while keys rotate; it verifies when one of them does with a trusted key.

Signing and verifying go through PyJWT and the ``rfc8785`` package (JCS).
"""

from __future__ import annotations

import json
from base64 import urlsafe_b64decode
from collections.abc import Iterable, Mapping
from typing import Any

import jwt
import rfc8785

from parley.types import AgentCardSignature


class CardSignatureError(ValueError):
    """A card's signatures do not verify; the message says why."""


def canonical_card(card: Mapping[str, Any]) -> bytes:
    """The bytes a card signature covers: the card's JSON, less ``signatures``, per JCS."""
    return rfc8785.dumps(_unsigned(card))


def canonical_forms(card: Mapping[str, Any]) -> list[bytes]:
    """Every form a reader may canonicalize ``card`` to: as written (``canonical_card``),
    then without its empty strings, lists and objects, when that differs."""
    written = canonical_card(card)
    pruned = rfc8785.dumps(_without_empty(_unsigned(card)) or {})
    return [written] if pruned == written else [written, pruned]


def _unsigned(card: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in card.items() if name != "signatures"}


def _without_empty(value: Any) -> Any:
    """``value`` less every empty string, list and object, at any depth (``None`` when
    nothing is left)."""
    if isinstance(value, dict):
        kept = {k: v for k, item in value.items() if (v := _without_empty(item)) is not None}
        return kept or None
    if isinstance(value, list):
        items = [v for item in value if (v := _without_empty(item)) is not None]
        return items or None
    return None if value == "" else value


def sign_card(
    card: Mapping[str, Any], key: Any, key_id: str, algorithm: str, **header: Any
) -> AgentCardSignature:
    """A signature over ``card`` (its wire JSON) as written (``canonical_card``) by
    ``key`` (a private key: PEM or a ``cryptography`` object), whose header names
    ``key_id`` (``kid``) and any ``header`` values (e.g. ``jku``)."""
    return _sign(canonical_card(card), key, key_id, algorithm, header)


def sign_card_forms(
    cards: Iterable[Mapping[str, Any]], key: Any, key_id: str, algorithm: str, **header: Any
) -> list[AgentCardSignature]:
    """One signature (as ``sign_card``) over each distinct canonical form of each of
    ``cards``: the forms of one card in the shapes of several versions, so that a reader
    of any of them verifies it, however it canonicalizes."""
    payloads = dict.fromkeys(form for card in cards for form in canonical_forms(card))
    return [_sign(payload, key, key_id, algorithm, header) for payload in payloads]


def _sign(
    payload: bytes, key: Any, key_id: str, algorithm: str, header: Mapping[str, Any]
) -> AgentCardSignature:
    headers = {"kid": key_id, "typ": "JOSE", **header}
    compact = jwt.api_jws.encode(payload, key, algorithm=algorithm, headers=headers)
    protected, _, signature = compact.split(".")
    return AgentCardSignature(protected=protected, signature=signature)


def signature_key_ids(card: Mapping[str, Any]) -> list[str]:
    """The ``kid`` each signature of ``card`` names (unreadable ones are skipped)."""
    key_ids = []
    for entry in card.get("signatures") or ():
        try:
            key_id = _header(entry).get("kid")
        except CardSignatureError:
            continue
        if isinstance(key_id, str):
            key_ids.append(key_id)
    return key_ids


def verify_card(
    card: Mapping[str, Any], keys: Mapping[str, Any], algorithms: list[str] | None = None
) -> str:
    """The ``kid`` of the first signature of ``card`` (its wire JSON) that a key of
    ``keys`` (``kid`` -> public key) verifies. Raises ``CardSignatureError`` when the
    card has no signature, or none verifies."""
    signatures = card.get("signatures") or []
    if not isinstance(signatures, list) or not signatures:
        raise CardSignatureError("the card is not signed")
    payloads = [jwt.utils.base64url_encode(form).decode() for form in canonical_forms(card)]
    reasons: list[str] = []
    for entry in signatures:
        try:
            return _verify_one(entry, payloads, keys, algorithms)
        except CardSignatureError as error:
            reasons.append(str(error))
    raise CardSignatureError("no signature verifies: " + "; ".join(reasons))


def _verify_one(
    entry: Any, payloads: list[str], keys: Mapping[str, Any], algorithms: list[str] | None
) -> str:
    header = _header(entry)
    protected, signature = entry["protected"], entry["signature"]
    key_id = header.get("kid")
    if not isinstance(key_id, str) or key_id not in keys:
        raise CardSignatureError(f"signed by key {key_id!r}, which is not trusted")
    key = keys[key_id]
    allowed = algorithms or [_algorithm_of(key, header)]
    failure: jwt.PyJWTError | None = None
    for payload in payloads:
        try:
            token = f"{protected}.{payload}.{signature}"
            jwt.api_jws.decode_complete(token, key, algorithms=allowed)
        except jwt.PyJWTError as error:
            failure = failure or error
        else:
            return key_id
    raise CardSignatureError(f"the signature by key {key_id!r} does not verify ({failure})")


def _header(entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise CardSignatureError("a signature is not a JSON object")
    protected, signature = entry.get("protected"), entry.get("signature")
    if not isinstance(protected, str) or not isinstance(signature, str):
        raise CardSignatureError("a signature lacks protected or signature")
    try:
        header = json.loads(urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))
    except ValueError:
        raise CardSignatureError("a signature's protected header is not base64url JSON") from None
    if not isinstance(header, dict):
        raise CardSignatureError("a signature's protected header is not a JSON object")
    return header


def _algorithm_of(key: Any, header: Mapping[str, Any]) -> str:
    """The one algorithm a trusted key may have signed with (never "none", never a MAC
    with a public key): a JWK's ``alg``, else by the key's type."""
    if isinstance(key, jwt.PyJWK):
        return str(key.algorithm_name)
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    if isinstance(key, ec.EllipticCurvePublicKey):
        return {256: "ES256", 384: "ES384", 521: "ES512"}.get(key.curve.key_size, "ES256")
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "EdDSA"
    if isinstance(key, rsa.RSAPublicKey):
        alg = header.get("alg")
        return alg if alg in ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512") else "RS256"
    raise CardSignatureError(f"unsupported trusted key type {type(key).__name__}")
