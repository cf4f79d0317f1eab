"""The gRPC transport (spec 3.2.2, 3.3.2): ``a2a.v1.A2AService`` over ``grpc.aio``, or with
``protocol="1.0"`` v1.0's ``lf.a2a.v1.A2AService`` (v1.0.1 §10, ``a2a-version: 1.0``).

Calls are made from the operation table and the shared protobuf converters, not from
generated stub code. The interface URL is a gRPC target (``host:port``, as cards carry
it); ``grpc://`` / ``http://`` mean plaintext, ``grpcs://`` / ``https://`` TLS. A bare
``host:port`` uses TLS unless the host is the loopback, or as ``tls`` says.

Errors: the ``a2a-error-bin`` trailer of a parley server gives the exact class; else the
official SDK's ``"<ErrorClass>: <message>"`` details; else the status code's class.
Streams number their events from the ``a2a-first-event-id`` initial metadata, so a cut
``TaskSubscription`` resumes with ``last-event-id`` like an SSE stream.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from parley.client._errors import (
    AgentUnreachableError,
    ClientError,
    ClientTimeoutError,
    StreamInterruptedError,
)
from parley.client._transport import ClientCallContext, StreamItem, Timeouts
from parley.client.transports._dialect import v1_dialect
from parley.client.transports._http import StreamPosition
from parley.protocol import (
    ERROR_CLASSES,
    A2AError,
    InvalidAgentResponseError,
    InvalidRequestError,
    Operation,
    UnsupportedOperationError,
)
from parley.protocol._operations import MAX_REQUEST_SIZE
from parley.protocol._versions import V0_3, V1_0
from parley.protocol.protobuf import (
    ERROR_METADATA,
    FIRST_EVENT_METADATA,
    LAST_EVENT_METADATA,
    PROTO_OPERATIONS,
    SERVICE,
    STATUS_DETAILS_METADATA,
    V1_SERVICE,
    ConversionError,
    load_grpc,
)
from parley.types import A2AModel

grpc = load_grpc()

_BY_NAME = {error.__name__: error for error in ERROR_CLASSES}
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def grpc_target(url: str, tls: bool | None = None) -> tuple[str, bool]:
    """The ``host:port`` to dial for an interface URL, and whether to use TLS."""
    if "://" in url:
        parts = urlsplit(url)
        secure = parts.scheme in ("grpcs", "https")
        default_port = 443 if secure else 80
        target = f"{parts.hostname}:{parts.port or default_port}"
        return target, secure if tls is None else tls
    host = url.rsplit(":", 1)[0]
    return url.rstrip("/"), (host not in _LOOPBACK) if tls is None else tls


class GRPCTransport:
    """Talks gRPC to the agent at ``url``.

    ``tls``: force TLS on or off (default: from the URL, see the module doc);
    ``root_certificates``: PEM of the CAs to trust (default: the system's);
    ``channel``: a ``grpc.aio.Channel`` to use instead (not closed by ``aclose``);
    ``max_message_size``: the largest request message sent (default: parley servers'
    limit, the same as their HTTP body limit); answers have no limit, as over HTTP.
    ``http_client`` is accepted and ignored, as gRPC does not speak through httpx.
    """

    def __init__(
        self,
        url: str,
        http_client: Any = None,
        *,
        timeouts: Timeouts | None = None,
        tls: bool | None = None,
        root_certificates: bytes | None = None,
        client_tls: Any = None,
        channel: Any = None,
        max_message_size: int = MAX_REQUEST_SIZE,
        protocol: str | None = None,
        **options: Any,
    ) -> None:
        self.url = url
        self._version = _VERSIONS.get(protocol or V0_3, _VERSIONS[V0_3])
        self.protocol = self._version.protocol
        self.tenant: str | None = options.get("tenant") or None
        """v1.0: the ``tenant`` of every request (the selected interface's)."""
        if tls is None and client_tls is not None:
            tls = True
        self.target, self.tls = grpc_target(url, tls)
        self.root_certificates = root_certificates
        self._key_and_chain: tuple[bytes | None, bytes | None] = (None, None)
        if client_tls is not None:  # a ClientTLS: its CA, and a client certificate (mTLS)
            ca, key, chain = client_tls.grpc_credentials()
            self.root_certificates = root_certificates or ca
            self._key_and_chain = (key, chain)
        self.timeouts = timeouts or Timeouts()
        self._owns_channel = channel is None
        self._channel = channel
        self._channel_options = (
            ("grpc.max_send_message_length", max_message_size),
            ("grpc.max_receive_message_length", -1),
        )

    @property
    def channel(self) -> Any:
        if self._channel is None:  # made on first use, inside the running event loop
            if self.tls:
                credentials = grpc.ssl_channel_credentials(
                    self.root_certificates, *self._key_and_chain
                )
                self._channel = grpc.aio.secure_channel(
                    self.target, credentials, options=self._channel_options
                )
            else:
                self._channel = grpc.aio.insecure_channel(
                    self.target, options=self._channel_options
                )
        return self._channel

    def _rpc(self, operation: Operation) -> RPC:
        """The method of ``operation`` in this transport's protocol version."""
        return self._version.rpc(operation, self.tenant)

    def _metadata(self, context: ClientCallContext) -> tuple[tuple[str, str], ...]:
        return (*_metadata(context), *self._version.metadata)

    async def request(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> Any:
        rpc = self._rpc(operation)
        call = self.channel.unary_unary(
            rpc.path,
            request_serializer=rpc.request.SerializeToString,
            response_deserializer=rpc.response.FromString,
        )
        with self._translated():
            response = await call(
                rpc.encode(params),
                metadata=self._metadata(context),
                timeout=self._timeout(operation, context),
            )
        return _decoded(operation, rpc.decode, response)

    async def stream(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> AsyncIterator[StreamItem]:
        rpc = self._rpc(operation)
        method = self.channel.unary_stream(
            rpc.path,
            request_serializer=rpc.request.SerializeToString,
            response_deserializer=rpc.response.FromString,
        )
        position = StreamPosition(last_event_id=context.last_event_id)
        call = method(
            rpc.encode(params),
            metadata=self._metadata(context),
            timeout=self._timeout(operation, context),
        )
        try:
            with self._translated(position):
                first = dict(await call.initial_metadata() or ()).get(FIRST_EVENT_METADATA, "")
                sequence = int(first) if isinstance(first, str) and first.isdigit() else None
                position.started = True
                async for response in call:
                    event = _decoded(operation, rpc.decode, response)
                    if sequence is not None:
                        position.last_event_id = sequence
                    yield StreamItem(event, sequence)
                    sequence = sequence + 1 if sequence is not None else None
        finally:
            call.cancel()

    def _timeout(self, operation: Operation, context: ClientCallContext) -> float | None:
        if context.timeout is not None:
            return context.timeout
        waits = operation.streaming or operation.name == "send_message"
        return self.timeouts.wait if waits else self.timeouts.read

    @contextmanager
    def _translated(self, position: StreamPosition | None = None) -> Iterator[None]:
        """Turn grpc failures into parley's error tree; the one place that does."""
        try:
            yield
        except grpc.aio.AioRpcError as error:
            raise _error(error, self.target, position) from None

    async def aclose(self) -> None:
        if self._owns_channel and self._channel is not None:
            await self._channel.close()
            self._channel = None


@dataclass(frozen=True, slots=True)
class RPC:
    path: str
    request: Any
    response: Any
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]


def create_grpc_transport(url: str, http_client: Any = None, **options: Any) -> GRPCTransport:
    """The registered factory of the ``GRPC`` transport."""
    return GRPCTransport(url, http_client, **options)


def _metadata(context: ClientCallContext) -> tuple[tuple[str, str], ...]:
    metadata = [(key.lower(), value) for key, value in context.headers.items()]
    # no query string in gRPC: a parameter (an API key ``in: query``) travels as metadata
    metadata += [(key.lower(), value) for key, value in context.query.items()]
    if context.extensions:
        metadata.append(("x-a2a-extensions", ", ".join(sorted(context.extensions))))
    if context.last_event_id is not None:
        metadata.append((LAST_EVENT_METADATA, str(context.last_event_id)))
    return tuple(metadata)


def _decoded(operation: Operation, convert: Any, response: Any) -> Any:
    try:
        return convert(response)
    except (ConversionError, ValidationError) as error:
        raise InvalidAgentResponseError(
            f"The agent's answer to {operation.grpc_method} is not valid: {error}"
        ) from None


def _error(error: Any, target: str, position: StreamPosition | None) -> A2AError:
    code = error.code()
    details = error.details() or ""
    trailers = dict(error.trailing_metadata() or ())
    if ERROR_METADATA in trailers:
        try:
            body = json.loads(trailers[ERROR_METADATA])
            return A2AError.from_code(int(body["code"]), body.get("message"), body.get("data"))
        except (ValueError, KeyError, TypeError):
            pass
    if STATUS_DETAILS_METADATA in trailers:
        from parley.protocol.v1 import error_from_status_details

        found = error_from_status_details(trailers[STATUS_DETAILS_METADATA])
        if found is not None:
            return found
    name, _, message = details.partition(": ")
    if name in _BY_NAME:
        return _BY_NAME[name](message or None)
    if code == grpc.StatusCode.UNAVAILABLE:
        if position is not None and position.started:
            return StreamInterruptedError(
                f"The stream from {target} broke off: {details}",
                last_event_id=position.last_event_id,
            )
        return AgentUnreachableError(f"Cannot reach the agent at {target}: {details}")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return InvalidRequestError(f"The message is larger than gRPC allows here: {details}")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ClientTimeoutError(f"The agent at {target} did not answer in time")
    if code == grpc.StatusCode.CANCELLED:
        return ClientError(f"The call to {target} was cancelled: {details}")
    return A2AError.from_grpc_status(code.name)(details or None)


def _v0_3_rpc(operation: Operation, tenant: str | None) -> RPC:
    proto_op = PROTO_OPERATIONS.get(operation.name)
    if proto_op is None:
        raise UnsupportedOperationError(
            f"{operation.grpc_method} is not in A2A 0.3's gRPC service; it needs 1.0"
        )
    return RPC(
        f"/{SERVICE}/{operation.grpc_method}",
        proto_op.request,
        proto_op.response,
        proto_op.params_to_proto,
        proto_op.result_from_proto,
    )


def _v1_0_rpc(operation: Operation, tenant: str | None) -> RPC:
    from parley.protocol import v1

    v1_op = v1.BY_V1_NAME[operation.name]
    dialect = v1_dialect(tenant)
    return RPC(
        f"/{V1_SERVICE}/{v1_op.grpc_method}",
        v1_op.request,
        v1_op.response,
        lambda params: v1.to_proto(v1_op, dialect.request(operation, params), request=True),
        lambda response: v1.decode_result(v1_op, response),
    )


@dataclass(frozen=True, slots=True)
class _Version:
    """What one A2A version says about gRPC, for the client: each operation's method, and
    the metadata every call carries."""

    protocol: str
    rpc: Callable[[Operation, str | None], RPC]
    metadata: tuple[tuple[str, str], ...] = ()


_VERSIONS = {
    V0_3: _Version(V0_3, _v0_3_rpc),
    V1_0: _Version(V1_0, _v1_0_rpc, (("a2a-version", V1_0),)),
}
"""Each version the transport speaks; the one it is made for is chosen once."""
