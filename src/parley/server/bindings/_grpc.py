"""The gRPC binding (spec 3.2.2, 3.3.2): ``a2a.v1.A2AService`` over ``grpc.aio``.

The service's method handlers are built from the operation table and the protobuf
converters, not from generated servicer code: each RPC decodes its request message into
the params model, calls the request handler method of its operation, and encodes the
result (or each streamed event).

Errors end the call with the error class's ``grpc_status``. The details string is
``"<ErrorClass>: <message>"``, as the official SDK writes it, and the trailing metadata
``a2a-error-bin`` carries the A2A error as JSON (``code``, ``message``, ``data``) so a
parley client rebuilds the exact class.

gRPC has no event ids. Stream events are numbered without gaps (the event log's
invariant), so the sequence number of a stream's first event, sent as the initial
metadata ``a2a-first-event-id``, numbers them all; a client resumes ``TaskSubscription``
with the metadata ``last-event-id``, as with SSE's ``Last-Event-ID``.
"""

from __future__ import annotations

import errno
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from google.protobuf.message import DecodeError

from parley.protocol import OPERATIONS, A2AError, JSONParseError, Operation
from parley.protocol.protobuf import (
    ERROR_METADATA,
    FIRST_EVENT_METADATA,
    PROTO_OPERATIONS,
    SERVICE,
    load_grpc,
)
from parley.server._context import CallContext
from parley.server._grpc_options import GRPCOptions
from parley.server._handler import RequestHandler
from parley.server.bindings._errors import as_a2a_error

grpc = load_grpc()


class GRPCBinding:
    """Serves ``a2a.v1.A2AService`` with ``handler``."""

    def __init__(self, handler: RequestHandler) -> None:
        self.handler = handler

    def service(self) -> Any:
        """The service's ``grpc.GenericRpcHandler`` (``server.add_generic_rpc_handlers``)."""
        handlers = {}
        for operation in OPERATIONS:
            proto_op = PROTO_OPERATIONS[operation.name]
            make = (
                grpc.unary_stream_rpc_method_handler
                if operation.streaming
                else grpc.unary_unary_rpc_method_handler
            )
            behaviour = self._stream(operation) if operation.streaming else self._unary(operation)
            handlers[operation.grpc_method] = make(
                behaviour,
                request_deserializer=_deserializer(proto_op.request),
                response_serializer=proto_op.response.SerializeToString,
            )
        return grpc.method_handlers_generic_handler(SERVICE, handlers)

    def _params(self, operation: Operation, request: Any) -> Any:
        if isinstance(request, Undecodable):
            raise JSONParseError(
                f"The request is not a valid {request.message_name} message: {request.reason}"
            )
        return PROTO_OPERATIONS[operation.name].params_from_proto(request)

    def _unary(self, operation: Operation) -> Callable[[Any, Any], Any]:
        proto_op = PROTO_OPERATIONS[operation.name]
        method = getattr(self.handler, operation.name)

        async def unary(request: Any, context: Any) -> Any:
            try:
                params = self._params(operation, request)
                result = await method(params, call_context(context))
                return proto_op.result_to_proto(result)
            except Exception as error:
                problem = as_a2a_error(error)
            await abort(context, problem)

        return unary

    def _stream(self, operation: Operation) -> Callable[[Any, Any], AsyncIterator[Any]]:
        proto_op = PROTO_OPERATIONS[operation.name]
        method = getattr(self.handler, operation.name)

        async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
            events = None
            problem: A2AError | None = None
            try:
                params = self._params(operation, request)
                events = await method(params, call_context(context))
                first = True
                async for sequence, event in events:
                    response = proto_op.result_to_proto(event)
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
                await abort(context, problem)

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


async def abort(context: Any, error: A2AError) -> NoReturn:
    """End the call with ``error``'s status (raises, as ``context.abort`` does)."""
    await context.abort(
        getattr(grpc.StatusCode, error.grpc_status),
        f"{type(error).__name__}: {error.message}",
        trailing_metadata=((ERROR_METADATA, error.body()),),
    )
    raise AssertionError("grpc.aio context.abort returned")  # pragma: no cover


def call_context(context: Any) -> CallContext:
    """The transport facts of a gRPC call, from its metadata."""
    headers = {
        key.lower(): value
        for key, value in context.invocation_metadata() or ()
        if isinstance(value, str)
    }
    return CallContext.from_headers(headers)


async def start_server(
    binding: GRPCBinding, options: GRPCOptions, max_message_size: int
) -> tuple[Any, int]:
    """A started ``grpc.aio`` server for ``binding``, and the port it listens on.

    Raises ``OSError`` when the address cannot be listened on: grpc would otherwise
    share a port another process listens on (``SO_REUSEPORT``), splitting the calls.
    """
    server = grpc.aio.server(
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.max_receive_message_length", max_message_size),
            ("grpc.max_send_message_length", -1),
        ]
    )
    server.add_generic_rpc_handlers((binding.service(),))
    address = f"{options.host}:{options.port}"
    try:
        if options.private_key is not None and options.certificate_chain is not None:
            credentials = grpc.ssl_server_credentials(
                [(options.private_key, options.certificate_chain)]
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
