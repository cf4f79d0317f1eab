# mypy: ignore-errors
"""The official a2a-sdk client with its AuthInterceptor (credentials by scheme name from a
credential store, per session) against a parley agent that requires them.

    python sdk_auth_client.py --url URL --transport JSONRPC|HTTP+JSON|GRPC
        --scheme NAME --credential SECRET

Prints one JSON object per line: the text the agent answered (who it says is calling), or
the error the SDK raised; first without credentials, then with them. The SDK's gRPC
transport does not run ClientCallInterceptors, so over gRPC the credential also goes in a
channel interceptor (the channel factory is where the SDK leaves gRPC settings).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory, create_text_message_object
from a2a.client.auth import AuthInterceptor, InMemoryContextCredentialStore
from a2a.client.middleware import ClientCallContext
from a2a.types import Message, Role, Task

SESSION = "parley-interop"


class _Metadata(grpc.aio.UnaryUnaryClientInterceptor, grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    def _with(self, details):
        metadata = list(details.metadata or []) + self.pairs
        return details._replace(metadata=metadata)

    async def intercept_unary_unary(self, continuation, details, request):
        return await continuation(self._with(details), request)

    async def intercept_unary_stream(self, continuation, details, request):
        return await continuation(self._with(details), request)


async def ask(url: str, transport: str, scheme: str, credential: str | None, card) -> dict:
    store = InMemoryContextCredentialStore()
    if credential is not None:
        await store.set_credentials(SESSION, scheme, credential)
    async with httpx.AsyncClient(timeout=15) as http:
        config = {"httpx_client": http, "supported_transports": [transport], "streaming": False}
        if transport == "GRPC":
            pairs = []
            if credential is not None:
                found = card.security_schemes[scheme].root
                name = "authorization" if found.type == "http" else found.name.lower()
                pairs = [(name, f"Bearer {credential}" if found.type == "http" else credential)]
            config["grpc_channel_factory"] = lambda target: grpc.aio.insecure_channel(
                target, interceptors=[_Metadata(pairs)]
            )
        client = ClientFactory(ClientConfig(**config)).create(
            card, interceptors=[AuthInterceptor(store)]
        )
        message = create_text_message_object(role=Role.user, content="who am I?")
        message.message_id = str(uuid.uuid4())
        context = ClientCallContext(state={"sessionId": SESSION})
        try:
            async for event in client.send_message(message, context=context):
                result = event[0] if isinstance(event, tuple) else event
                if isinstance(result, Task):
                    text = result.artifacts[0].parts[0].root.text
                    return {"answer": text}
                if isinstance(result, Message):
                    return {"answer": result.parts[0].root.text}
        except Exception as error:  # what the SDK raised, as its user sees it
            code = error.code().name if isinstance(error, grpc.aio.AioRpcError) else None
            status = getattr(error, "status_code", None)
            return {"raised": type(error).__name__, "grpc_status": code, "status": status}
    return {"answer": None}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--transport", required=True)
    parser.add_argument("--scheme", required=True)
    parser.add_argument("--credential", required=True)
    options = parser.parse_args()
    async with httpx.AsyncClient(timeout=15) as http:
        card = await A2ACardResolver(http, options.url).get_agent_card()
    for credential in (None, options.credential):
        result = await ask(options.url, options.transport, options.scheme, credential, card)
        print(json.dumps({"with_credential": credential is not None, **result}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
