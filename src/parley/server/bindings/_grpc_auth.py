"""The gRPC authentication interceptor: the ``Authenticator`` before any A2A method runs.

A refused call ends with ``UNAUTHENTICATED`` (or ``PERMISSION_DENIED``), the A2A error in
the ``a2a-error-bin`` trailer as every gRPC error of parley, and the challenges in
``www-authenticate``. An accepted call runs with its ``Principal`` in ``PRINCIPAL``, a
context variable of the call's task that the binding's ``call_context`` reads. The
client certificate comes from the call's TLS auth context (``x509_pem_cert``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from parley.protocol import A2AError, UnauthenticatedError
from parley.protocol.protobuf import load_grpc
from parley.server.agent._context import Principal
from parley.server.auth._auth import Authenticator, Credentials
from parley.server.bindings._grpc import PRINCIPAL, SERVICES, Service, abort

grpc = load_grpc()


class AuthInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc,name-defined]
    """Authenticates every call, of the v0.3 and the v1.0 A2A service alike (the server
    serves nothing else)."""

    def __init__(self, authenticator: Authenticator) -> None:
        self.authenticator = authenticator
        self._handlers: dict[str, Any] = {}

    async def intercept_service(
        self, continuation: Callable[[Any], Awaitable[Any]], details: Any
    ) -> Any:
        method: str = details.method
        wrapped = self._handlers.get(method)
        if wrapped is None:
            handler = await continuation(details)
            if handler is None:
                return handler
            named = (s for s in SERVICES if method.startswith(f"/{s.name}/"))
            service = next(named, SERVICES[0])  # the server serves nothing else
            wrapped = self._handlers[method] = self._wrap(handler, service)
        return wrapped

    def _wrap(self, handler: Any, service: Service) -> Any:
        async def authenticate(context: Any) -> Principal:
            return await self._authenticate(context, service)

        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
                token = PRINCIPAL.set(await authenticate(context))
                try:
                    async for response in inner_stream(request, context):
                        yield response
                finally:
                    PRINCIPAL.reset(token)

            return grpc.unary_stream_rpc_method_handler(
                stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        inner_unary = handler.unary_unary

        async def unary(request: Any, context: Any) -> Any:
            token = PRINCIPAL.set(await authenticate(context))
            try:
                return await inner_unary(request, context)
            finally:
                PRINCIPAL.reset(token)

        return grpc.unary_unary_rpc_method_handler(
            unary,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    async def _authenticate(self, context: Any, service: Service) -> Principal:
        metadata = {
            key.lower(): value
            for key, value in context.invocation_metadata() or ()
            if isinstance(value, str)
        }
        chain = context.auth_context().get("x509_pem_cert") or ()
        certificate = chain[0] if chain else None
        credentials = Credentials(metadata, client_certificate=certificate, query=metadata)
        try:
            return await self.authenticator.authenticate(credentials)
        except A2AError as error:
            status = service.status(error)
            if isinstance(error, UnauthenticatedError):
                challenge = ("www-authenticate", self.authenticator.www_authenticate)
                await abort(context, error, status, challenge)
            await abort(context, error, status)
