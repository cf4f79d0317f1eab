"""The gRPC side of the wire log: a client for the card's gRPC interface whose channel
records each call as it goes over the wire: the method and metadata sent, the request
message, the initial metadata, each answer or event, and the status and trailers of a
call that fails. Messages are shown in protobuf's JSON mapping of the bytes sent and
received.

The transport is parley's own (``transport_factory("GRPC")``), given a channel with
grpc's client interceptors; the channel is made here, inside the running event loop, as
grpc's asyncio API requires. This module needs grpcio (``parley-a2a[grpc]``): it is
imported only when the page chooses a gRPC interface.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
from google.protobuf import json_format

from parley.client import (
    Client,
    ClientError,
    ClientInterceptor,
    candidate_interfaces,
    transport_factory,
)
from parley.inspect._wire import WireLog
from parley.protocol import SUPPORTED_VERSIONS
from parley.types import AgentCard


class GRPCSession:
    """A client over the card's gRPC interface in ``protocol`` with a recording channel
    (``aclose`` closes both)."""

    def __init__(self, client: Client, channel: Any, interface: dict[str, str]) -> None:
        self.client = client
        self.channel = channel
        self.interface = interface

    async def aclose(self) -> None:
        try:
            await self.client.aclose()
        finally:
            await self.channel.close()


def grpc_session(
    card: AgentCard,
    protocol: str | None,
    log: WireLog,
    interceptors: Sequence[ClientInterceptor],
) -> GRPCSession:
    """Raises ``ClientError`` when the card offers no gRPC interface in ``protocol``."""
    protocols = (protocol,) if protocol else SUPPORTED_VERSIONS
    found = candidate_interfaces(card, ["GRPC"], protocols=protocols)
    factory = transport_factory("GRPC")
    if not found or factory is None:
        raise ClientError("the agent offers no gRPC interface in that version")
    interface = found[0]
    # the transport's own reading of the URL: where to dial, and whether with TLS
    probe: Any = factory(interface.url, None, protocol=interface.protocol)
    target: str = probe.target
    recorders: list[Any] = [_Unary(log, target), _Stream(log, target)]
    if probe.tls:
        credentials = grpc.ssl_channel_credentials()
        channel = grpc.aio.secure_channel(target, credentials, interceptors=recorders)
    else:
        channel = grpc.aio.insecure_channel(target, interceptors=recorders)
    transport = factory(
        interface.url,
        None,
        protocol=interface.protocol,
        tenant=interface.tenant,
        channel=channel,
    )
    client = Client(transport, card=card, interceptors=interceptors)
    chosen = {"protocol": interface.protocol, "transport": "GRPC", "url": interface.url}
    return GRPCSession(client, channel, chosen)


class _Recorder:
    def __init__(self, log: WireLog, target: str) -> None:
        self.log = log
        self.target = target

    def sent(self, details: Any, request: Any) -> int:
        method = details.method
        return self.log.add(
            "request",
            binding="grpc",
            method=method.decode() if isinstance(method, bytes) else str(method),
            url=self.target,
            headers=_metadata(details.metadata),
            body=_message(request),
        )

    def failed(self, of: int, error: Any) -> None:
        self.log.add(
            "failure",
            of=of,
            error=f"{error.code().name}: {error.details()}",
            headers=_metadata(error.trailing_metadata()),
        )


class _Unary(_Recorder, grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    """Records unary calls: the request, then the answer or the failure."""

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        of = self.sent(details, request)
        call = await continuation(details, request)
        try:
            response = await call  # the transport awaits the same call: it has the answer
        except grpc.aio.AioRpcError as error:
            self.failed(of, error)
            return call
        headers = _metadata(await call.initial_metadata())
        self.log.add("response", of=of, status="OK", headers=headers)
        self.log.add("body", of=of, body=_message(response))
        return call


class _Stream(_Recorder, grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[type-arg]
    """Records server-streaming calls: the request, the initial metadata, each event as
    it arrives, and how the stream ended."""

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        of = self.sent(details, request)
        call = await continuation(details, request)
        return self._events(call, of)

    async def _events(self, call: Any, of: int) -> AsyncIterator[Any]:
        ended = False
        try:
            headers = _metadata(await call.initial_metadata())
            self.log.add("response", of=of, status="OK", headers=headers)
            async for response in call:
                self.log.add("event", of=of, body=_message(response))
                yield response
            ended = True
            self.log.add("end", of=of, headers=_metadata(await call.trailing_metadata()))
        except grpc.aio.AioRpcError as error:
            ended = True
            self.failed(of, error)
            raise
        finally:
            if not ended:
                self.log.add("end", of=of, note="closed by the client")


def _message(message: Any) -> str:
    return str(json_format.MessageToJson(message, indent=2))


def _metadata(metadata: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    for key, value in metadata or ():
        found[key] = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return found
