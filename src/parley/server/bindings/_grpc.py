"""The gRPC binding (spec 3.2.2, 3.3.2; v1.0.1 §10): v0.3's ``a2a.v1.A2AService`` and
v1.0's ``lf.a2a.v1.A2AService`` side by side on one server, over ``grpc.aio``.

The services' method handlers are built from the operation tables and the converters of
each version, not from generated servicer code: each RPC decodes its request message into
the core params model, calls the request handler method of its operation, and encodes the
result (or each streamed event). The service a call names is its version; an
``a2a-version`` metadata naming the other is refused with ``VersionNotSupportedError``.

Errors end the call with the error class's gRPC status of that version (``grpc_status``
or ``v1_grpc_status``). The details string is ``"<ErrorClass>: <message>"``, as the
official SDK writes it; the trailing metadata ``grpc-status-details-bin`` carries a
``google.rpc.Status`` with an ``ErrorInfo`` (v1.0.1 §10.6, on both services), and
``a2a-error-bin`` the A2A error as JSON (``code``, ``message``, ``data``) so a parley
client rebuilds the exact class.

gRPC has no event ids. Stream events are numbered without gaps (the event log's
invariant), so the sequence number of a stream's first event, sent as the initial
metadata ``a2a-first-event-id``, numbers them all; a client resumes ``TaskSubscription``
with the metadata ``last-event-id``, as with SSE's ``Last-Event-ID``.
"""

from __future__ import annotations

import errno
from collections.abc import AsyncIterator, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NoReturn

from google.protobuf.message import DecodeError

from parley.protocol import (
    OPERATIONS,
    A2AError,
    JSONParseError,
    Operation,
    VersionNotSupportedError,
    requested_version,
)
from parley.protocol._versions import V0_3, V1_0, VERSION_HEADER
from parley.protocol.protobuf import (
    ERROR_METADATA,
    FIRST_EVENT_METADATA,
    PROTO_OPERATIONS,
    SERVICE,
    STATUS_DETAILS_METADATA,
    V1_SERVICE,
    load_grpc,
)
from parley.protocol.v1 import (
    V1_OPERATIONS,
    V1Operation,
    decode_request,
    encode_result,
    grpc_details,
    status_details,
    to_proto,
)
from parley.server.agent._context import CallContext, Principal
from parley.server.bindings._errors import as_a2a_error
from parley.server.bindings._grpc_options import GRPCOptions
from parley.server.tasks._handler import RequestHandler

grpc = load_grpc()

PRINCIPAL: ContextVar[Principal | None] = ContextVar("parley_grpc_principal", default=None)
"""The principal of the call being served, set by ``AuthInterceptor``."""


def error_metadata(error: A2AError, grpc_status: str) -> tuple[tuple[str, bytes], ...]:
    return (
        (ERROR_METADATA, error.body()),
        (STATUS_DETAILS_METADATA, status_details(error, grpc_status)),
    )


@dataclass(frozen=True, slots=True)
class RPC:
    """One method of one service: its messages and how its params and result convert."""

    operation: Operation
    method: str
    request: Any
    response: Any
    decode: Callable[[Any], Any]
    encode: Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Service:
    """A gRPC service of one protocol version: the data the binding serves it by."""

    name: str
    version: str
    rpcs: tuple[RPC, ...]
    status: Callable[[A2AError], str]
    """The gRPC status an error is answered with in this version."""
    tenant: Callable[[Any], str | None]
    """The tenant a request names (v1.0's ``tenant`` field; ``None``: none)."""


def _v03_rpc(operation: Operation) -> RPC:
    proto_op = PROTO_OPERATIONS[operation.name]
    return RPC(
        operation,
        operation.grpc_method,
        proto_op.request,
        proto_op.response,
        proto_op.params_from_proto,
        proto_op.result_to_proto,
    )


def _v1_rpc(operation: V1Operation) -> RPC:
    def decode(request: Any) -> Any:
        return decode_request(operation, request)

    def encode(result: Any) -> Any:
        return to_proto(operation, encode_result(operation, result))

    return RPC(
        operation.core, operation.grpc_method, operation.request, operation.response, decode, encode
    )


def _no_tenant(request: Any) -> str | None:
    return None


def _tenant_field(request: Any) -> str | None:
    return getattr(request, "tenant", "") or None


SERVICES = (
    Service(
        SERVICE,
        V0_3,
        tuple(_v03_rpc(operation) for operation in OPERATIONS),
        attrgetter("grpc_status"),
        _no_tenant,
    ),
    Service(
        V1_SERVICE,
        V1_0,
        tuple(_v1_rpc(operation) for operation in V1_OPERATIONS),
        attrgetter("v1_grpc_status"),
        _tenant_field,
    ),
)


_SERVICE_OF = {service.version: service.name for service in SERVICES}
"""The service that speaks each version."""


class GRPCBinding:
    """Serves ``a2a.v1.A2AService`` (v0.3) and ``lf.a2a.v1.A2AService`` (v1.0) with
    ``handler``."""

    def __init__(self, handler: RequestHandler) -> None:
        self.handler = handler

    def services(self) -> list[Any]:
        """One ``grpc.GenericRpcHandler`` per service (``server.add_generic_rpc_handlers``)."""
        return [self._service(service) for service in SERVICES]

    def _service(self, service: Service) -> Any:
        handlers = {}
        for rpc in service.rpcs:
            streaming = rpc.operation.streaming
            make = (
                grpc.unary_stream_rpc_method_handler
                if streaming
                else grpc.unary_unary_rpc_method_handler
            )
            behaviour = self._stream(service, rpc) if streaming else self._unary(service, rpc)
            handlers[rpc.method] = make(
                behaviour,
                request_deserializer=_deserializer(rpc.request),
                response_serializer=rpc.response.SerializeToString,
            )
        return grpc.method_handlers_generic_handler(service.name, handlers)

    def _params(self, service: Service, rpc: RPC, request: Any, call: CallContext) -> Any:
        version = requested_version(call.headers.get(VERSION_HEADER))
        if version is not None and version != service.version:
            raise VersionNotSupportedError(
                f"{service.name} speaks A2A {service.version}, not {version}; "
                f"call {_SERVICE_OF[version]} for {version}",
                data={"supportedVersions": [service.version]},
            )
        if isinstance(request, Undecodable):
            raise JSONParseError(
                f"The request is not a valid {request.message_name} message: {request.reason}"
            )
        call.tenant = service.tenant(request)
        return rpc.decode(request)

    def _unary(self, service: Service, rpc: RPC) -> Callable[[Any, Any], Any]:
        method = getattr(self.handler, rpc.operation.name)

        async def unary(request: Any, context: Any) -> Any:
            try:
                call = call_context(context, service.version)
                params = self._params(service, rpc, request, call)
                result = await method(params, call)
                return rpc.encode(result)
            except Exception as error:
                problem = as_a2a_error(error)
            await abort(context, problem, service.status(problem))

        return unary

    def _stream(self, service: Service, rpc: RPC) -> Callable[[Any, Any], AsyncIterator[Any]]:
        method = getattr(self.handler, rpc.operation.name)

        async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
            events = None
            problem: A2AError | None = None
            try:
                call = call_context(context, service.version)
                params = self._params(service, rpc, request, call)
                events = await method(params, call)
                first = True
                async for sequence, event in events:
                    response = rpc.encode(event)
                    if first:
                        metadata = ((FIRST_EVENT_METADATA, str(sequence)),)
                        await context.send_initial_metadata(metadata)
                        first = False
                    yield response
            except Exception as error:
                problem = as_a2a_error(error)
            finally:
                aclose = getattr(events, "aclose", None)
                if aclose is not None:
                    await aclose()
            if problem is not None:
                await abort(context, problem, service.status(problem))

        return stream


@dataclass(frozen=True, slots=True)
class Undecodable:
    """A request whose bytes are not the operation's message: answered with a parse
    error by the method, rather than by grpc's own UNKNOWN with the decoder's text."""

    message_name: str
    reason: str


def _deserializer(message_class: Any) -> Callable[[bytes], Any]:
    decode = message_class.FromString

    def deserialize(data: bytes) -> Any:
        try:
            return decode(data)
        except DecodeError:
            return Undecodable(message_class.DESCRIPTOR.full_name, "the wire format is corrupt")

    return deserialize


async def abort(context: Any, error: A2AError, status: str, *trailers: tuple[str, str]) -> NoReturn:
    """End the call with ``status`` (raises, as ``context.abort`` does), with
    ``trailers`` beside the error's own."""
    await context.abort(
        getattr(grpc.StatusCode, status),
        grpc_details(error),
        trailing_metadata=(*error_metadata(error, status), *trailers),
    )
    raise AssertionError("grpc.aio context.abort returned")  # pragma: no cover


def call_context(context: Any, version: str = V0_3) -> CallContext:
    """The transport facts of a gRPC call, from its metadata."""
    headers = {
        key.lower(): value
        for key, value in context.invocation_metadata() or ()
        if isinstance(value, str)
    }
    call = CallContext.from_headers(headers, principal=PRINCIPAL.get())
    call.protocol_version = version
    return call


async def start_server(
    binding: GRPCBinding,
    options: GRPCOptions,
    max_message_size: int,
    interceptors: Sequence[Any] = (),
) -> tuple[Any, int]:
    """A started ``grpc.aio`` server for ``binding``, and the port it listens on.

    Raises ``OSError`` when the address cannot be listened on: grpc would otherwise
    share a port another process listens on (``SO_REUSEPORT``), splitting the calls.
    """
    server = grpc.aio.server(
        interceptors=interceptors,
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.max_receive_message_length", max_message_size),
            ("grpc.max_send_message_length", -1),
        ],
    )
    server.add_generic_rpc_handlers(tuple(binding.services()))
    address = f"{options.host}:{options.port}"
    try:
        if options.private_key is not None and options.certificate_chain is not None:
            credentials = grpc.ssl_server_credentials(
                [(options.private_key, options.certificate_chain)],
                root_certificates=options.client_ca,
                require_client_auth=options.client_ca is not None,
            )
            port = server.add_secure_port(address, credentials)
        else:
            port = server.add_insecure_port(address)
    except RuntimeError:
        raise OSError(
            errno.EADDRINUSE,
            f"gRPC cannot listen on {address}: the port is in use by another process "
            "(or the address is not one of this machine's)",
        ) from None
    await server.start()
    return server, port
