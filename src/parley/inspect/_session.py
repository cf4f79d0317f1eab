"""One connection of the inspector to an agent: its card, the client the page's calls go
through (any binding and version the card offers), the wire log and the push receiver.

A connection is made in two steps, as a person does it: read the card (``open``), then
choose the version, the binding and the credentials its schemes ask for (``use``). Every
call of the page then goes through parley's public client, so what the inspector shows
is what any parley client would send and receive.
"""

from __future__ import annotations

import json
import secrets
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from parley.client import (
    AgentKeys,
    CardVerifier,
    Client,
    ClientConfig,
    ClientFactory,
    ClientInterceptor,
    CredentialsAuth,
    PushNotification,
    PushReceiver,
    StaticCredentials,
    candidate_interfaces,
    fetch_card,
)
from parley.inspect._wire import RecordingTransport, WireLog
from parley.protocol import SUPPORTED_VERSIONS, A2AError
from parley.types import AgentCard

if TYPE_CHECKING:
    from parley.inspect._grpc_wire import GRPCSession

EARLY = "2025-early"


@dataclass
class Choice:
    """What the page chose to speak: the protocol version, the binding (the card's name
    for it) and a credential per security scheme name."""

    protocol: str | None = None
    transport: str | None = None
    credentials: dict[str, str] = field(default_factory=dict)


class Connection:
    """The inspector's link to one agent at ``url``."""

    def __init__(self, url: str, protocol: str | None = None) -> None:
        self.id = secrets.token_urlsafe(12)
        self.url = url
        self.fetched_as = protocol if protocol == EARLY else None
        self.wire = WireLog()
        self.http = httpx.AsyncClient(
            transport=RecordingTransport(self.wire), timeout=httpx.Timeout(60.0, connect=10.0)
        )
        self.keys = AgentKeys.of_agent(agent_origin(url), http=self.http)
        self.push_token = secrets.token_urlsafe(16)
        self.receiver = PushReceiver(self._notified, self.keys, token=self.push_token)
        self.card: AgentCard | None = None
        self.raw_card: dict[str, Any] | None = None
        self.signature: dict[str, Any] = {}
        self.client: Client | None = None
        self._grpc: GRPCSession | None = None
        self.choice = Choice()

    async def open(self) -> None:
        """Fetch and check the card; raises what ``fetch_card`` raises."""
        verifier = CardVerifier(self.keys, "if-present")
        first = len(self.wire.entries)
        try:
            self.card = await fetch_card(self.url, self.http, protocol=self.fetched_as)
        finally:
            self.raw_card = self._raw_card(list(self.wire.entries)[first:])
        self.signature = await _signature(verifier, self.raw_card)

    def _raw_card(self, entries: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The card's JSON as it was received: the last body of ``entries``."""
        for entry in reversed(entries):
            if entry["kind"] == "body":
                try:
                    raw = json.loads(entry["body"])
                except ValueError:
                    return None
                return raw if isinstance(raw, dict) else None
        return None

    def options(self) -> list[dict[str, str]]:
        """The versions and bindings the card offers that parley speaks, agent's order."""
        assert self.card is not None
        if self.fetched_as == EARLY:
            return [{"protocol": EARLY, "transport": "JSONRPC", "url": self.card.url}]
        return [
            {"protocol": c.protocol, "transport": c.transport, "url": c.url}
            for c in candidate_interfaces(self.card, protocols=SUPPORTED_VERSIONS)
        ]

    async def use(self, choice: Choice) -> dict[str, str]:
        """Make the client for ``choice``; returns the interface it talks to. Raises
        ``ClientError`` when the card offers nothing for it."""
        assert self.card is not None
        if (choice.transport or "").upper() == "GRPC":
            from parley.inspect._grpc_wire import grpc_session

            session = grpc_session(self.card, choice.protocol, self.wire, self.interceptors(choice))
            await self.close_client()
            self.client, self._grpc, self.choice = session.client, session, choice
            return session.interface
        config = ClientConfig(
            transports=[choice.transport] if choice.transport else None,
            protocol=choice.protocol,
            http_client=self.http,
            interceptors=self.interceptors(choice),
            extended_card=False,
        )
        client = ClientFactory(config).create(self.card)
        await self.close_client()
        self.client, self.choice = client, choice
        interface = getattr(client.transport, "interface", None)
        if interface is None:  # the 2025-early dialect: JSON-RPC at the card's url
            return {"protocol": EARLY, "transport": "JSONRPC", "url": self.card.url}
        return {
            "protocol": interface.protocol,
            "transport": interface.transport,
            "url": interface.url,
        }

    def interceptors(self, choice: Choice | None = None) -> list[ClientInterceptor]:
        """What puts the credentials of ``choice`` (default: the one in use) on a call."""
        credentials = (choice or self.choice).credentials
        given = {name: value for name, value in credentials.items() if value}
        return [CredentialsAuth(StaticCredentials(given))]

    async def _notified(self, notification: PushNotification) -> None:
        self.wire.add(
            "push",
            verified=True,
            claims=notification.claims,
            task=json.loads(notification.task.to_json()),
        )

    async def receive_push(self, scope: Any, receive: Any, send: Any) -> None:
        """Pass a notification to the receiver; one it refuses is shown with the reason."""
        status: list[int] = []
        answer: list[bytes] = []
        received: list[bytes] = []

        async def receive_body() -> Any:
            message = await receive()
            received.append(message.get("body", b""))
            return message

        async def send_answer(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            elif message["type"] == "http.response.body":
                answer.append(message.get("body", b""))
            await send(message)

        await self.receiver(scope, receive_body, send_answer)
        if status and status[0] != 200:
            self.wire.add(
                "push",
                verified=False,
                status=status[0],
                reason=_reason(b"".join(answer)),
                body=b"".join(received).decode("utf-8", "replace"),
            )

    async def close_client(self) -> None:
        client, grpc, self.client, self._grpc = self.client, self._grpc, None, None
        if grpc is not None:  # the client, and the channel made for it
            await grpc.aclose()
        elif client is not None:
            await client.aclose()

    async def aclose(self) -> None:
        self.wire.close()
        async with AsyncExitStack() as closing:
            closing.push_async_callback(self.http.aclose)
            closing.push_async_callback(self.close_client)


async def _signature(verifier: CardVerifier, raw: dict[str, Any] | None) -> dict[str, Any]:
    """What verifying the card's signatures against the agent's own keys found."""
    if raw is None:
        return {"status": "not checked"}
    try:
        found = await verifier.verify(raw)
    except A2AError as error:
        return {"status": "invalid", "reason": error.message}
    return {"status": found.status, "keyId": found.key_id}


def _reason(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return body.decode("utf-8", "replace")


def agent_origin(url: str) -> str:
    """scheme://host:port of the agent's base or card URL."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    return f"{parts.scheme}://{parts.netloc}"


class Connections:
    """The connections of one inspector, by id; closed with it."""

    def __init__(self) -> None:
        self.by_id: dict[str, Connection] = {}

    def get(self, connection_id: str) -> Connection:
        """Raises ``KeyError`` for an id this inspector did not give."""
        return self.by_id[connection_id]

    def add(self, connection: Connection) -> None:
        self.by_id[connection.id] = connection

    async def close(self, connection_id: str) -> None:
        """Close the connection ``connection_id``, if there is one."""
        connection = self.by_id.pop(connection_id, None)
        if connection is not None:
            await connection.aclose()

    async def aclose(self) -> None:
        async with AsyncExitStack() as closing:
            for connection in self.by_id.values():
                closing.push_async_callback(connection.aclose)
        self.by_id.clear()

    async def __aenter__(self) -> Connections:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
