# mypy: ignore-errors
"""a2a-sdk 1.3's own card verifier against a parley server: fetches the agent's JWKS,
builds ``create_signature_verifier`` with it and resolves the card through
``A2ACardResolver.get_agent_card(signature_verifier=...)``, once for each way of asking
(no ``A2A-Version``, and ``A2A-Version: 1.0`` as the SDK's own clients send it). Prints
one JSON line per way: ``{"asked": ..., "verified": bool, "error": ..., "name": ...}``.

Usage: sdk1_card_verifier.py --url URL
"""

from __future__ import annotations

import argparse
import asyncio
import json

import httpx
from a2a.client import A2ACardResolver
from a2a.utils.signing import create_signature_verifier
from jwt import PyJWK


async def main(url: str) -> None:
    async with httpx.AsyncClient() as http:
        jwks = (await http.get(f"{url}/.well-known/jwks.json")).json()
    keys = {key["kid"]: PyJWK(key) for key in jwks["keys"]}

    def key_provider(kid: str | None, jku: str | None) -> PyJWK:
        return keys[kid]

    verifier = create_signature_verifier(key_provider, ["ES256", "ES384", "EdDSA", "RS256"])
    for asked in (None, "1.0"):
        headers = {"A2A-Version": asked} if asked else {}
        async with httpx.AsyncClient(headers=headers) as http:
            resolver = A2ACardResolver(http, url)
            try:
                card = await resolver.get_agent_card(signature_verifier=verifier)
            except Exception as error:
                line = {
                    "asked": asked,
                    "verified": False,
                    "error": f"{type(error).__name__}: {error}",
                }
            else:
                line = {"asked": asked, "verified": True, "name": card.name}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    asyncio.run(main(parser.parse_args().url))
