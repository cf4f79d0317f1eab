"""The v1.0 agent card as served, signed and verified: the ProtoJSON a v1.0 reader
reconstructs from it.

A v1.0 verifier reads a card into the proto ``AgentCard`` and canonicalizes what that
message writes back (v1.0.1 §8.4.1): fields without presence left out at their default
value, ``optional`` ones kept when set (``"streaming": false``), REQUIRED ones always
there. The card parley serves to a v1.0 client is that very form, so the bytes it signs
are the bytes any v1.0 verifier computes, whether it canonicalizes the JSON as received
or the message it read.
"""

from __future__ import annotations

from typing import Any

from parley.protocol._cards import card_to_v1
from parley.protocol.protobuf import from_json
from parley.protocol.v1._load import json_format, pb1

Wire = dict[str, Any]

_REQUIRED: dict[str, Any] = {
    "name": "",
    "description": "",
    "version": "",
    "supportedInterfaces": [],
    "capabilities": {},
    "defaultInputModes": [],
    "defaultOutputModes": [],
    "skills": [],
}
"""The REQUIRED members of ``AgentCard`` and their default values (present even then)."""


def card_json_v1(card: Wire) -> Wire:
    """``card`` (the core card's wire JSON) in v1.0's shape and §8.4.1's field presence.
    Raises ``ConversionError`` for a card the v1.0 proto cannot hold."""
    message = from_json(card_to_v1(card), pb1.AgentCard)
    written: Wire = json_format.MessageToDict(message)
    return {name: written.get(name, default) for name, default in _REQUIRED.items()} | written
