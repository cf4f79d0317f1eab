"""Verifying an agent card's signatures (spec 5.5 ``signatures``; the format is in
``parley.protocol._card_signing``).

The keys are an ``AgentKeys``: a JWKS the client trusts (given, or fetched from a URL and
fetched again when a signature names a key id it has not seen, as after a rotation).
The policy says what an unsigned or badly signed card means: ``off`` does not look,
``if-present`` refuses a card whose signatures do not verify but takes an unsigned one,
``require`` refuses both. Verification works on the card's JSON as it came over the
wire, so fields this client does not model are covered too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from parley.client._errors import CardError, ClientError
from parley.client._jwks import AgentKeys, KeyNotFoundError

Policy = Literal["off", "if-present", "require"]
POLICIES: tuple[Policy, ...] = ("off", "if-present", "require")


@dataclass(frozen=True, slots=True)
class CardVerification:
    """What verifying a card found."""

    status: Literal["verified", "unsigned", "not checked"]
    key_id: str | None = None
    """The ``kid`` of the trusted key whose signature verified."""


class CardVerifier:
    """Checks card signatures with ``keys`` under ``policy``; ``verify`` raises
    ``CardError`` when the policy refuses the card."""

    def __init__(self, keys: AgentKeys | None, policy: Policy = "require") -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        if keys is None and policy != "off":
            raise ValueError("verifying card signatures needs keys (an AgentKeys)")
        self.keys = keys
        self.policy = policy
        self.last: CardVerification | None = None
        """What the latest ``verify`` found."""

    async def verify(self, card: Mapping[str, Any]) -> CardVerification:
        """Verify ``card`` (its JSON, as received) under the policy."""
        self.last = await self._verify(card)
        return self.last

    async def _verify(self, card: Mapping[str, Any]) -> CardVerification:
        if self.policy == "off" or self.keys is None:
            return CardVerification("not checked")
        if not card.get("signatures"):
            if self.policy == "require":
                raise CardError("the agent card is not signed, and a signed card is required")
            return CardVerification("unsigned")
        from parley.protocol._card_signing import (
            CardSignatureError,
            signature_key_ids,
            verify_card,
        )

        trusted: dict[str, Any] = {}
        for key_id in signature_key_ids(card):
            try:
                trusted[key_id] = await self.keys.key(key_id)
            except KeyNotFoundError:
                continue
            except ClientError as error:
                raise CardError(f"cannot check the card's signature: {error.message}") from None
        try:
            key_id = verify_card(card, trusted)
        except CardSignatureError as error:
            raise CardError(f"the agent card's signature does not verify: {error}") from None
        return CardVerification("verified", key_id)
