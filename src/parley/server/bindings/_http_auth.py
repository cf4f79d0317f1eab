"""The ASGI authentication layer in front of the JSON-RPC and HTTP+JSON bindings.

It runs the ``Authenticator`` before any binding code: a refused call is answered here
(401 with ``WWW-Authenticate``, or 403) in the body format of the binding it was meant
for; an accepted one goes on with its ``Principal`` as ``scope["user"]`` (where
Starlette's ``request.user`` finds it too), which ``call_context`` puts in the
``CallContext``. The client certificate is read from the ASGI TLS extension
(``scope["extensions"]["tls"]["client_cert_chain"]``); see ``TLSHTTPProtocol``.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from parley.protocol import A2AError, PermissionDeniedError, UnauthenticatedError
from parley.server.auth._auth import Authenticator, Credentials
from parley.server.bindings._http import send_body


def http_credentials(scope: Scope) -> Credentials:
    headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
    tls = scope.get("extensions", {}).get("tls") or {}
    chain = tls.get("client_cert_chain") or ()
    certificate = chain[0].encode() if chain and isinstance(chain[0], str) else None
    return Credentials(
        headers, scope.get("query_string", b"").decode("latin-1"), client_certificate=certificate
    )


Refusal = tuple[bytes, list[tuple[bytes, bytes]]]
"""An error answered before a binding reads the request: its body, and the headers that
say its media type."""


class AuthenticationLayer:
    """Authenticates every request before handing it to ``app``; ``encode_error`` writes
    a refusal in the body format and media type of ``app``'s binding (and of the
    protocol version the request asks for)."""

    def __init__(
        self,
        app: ASGIApp,
        authenticator: Authenticator,
        encode_error: Callable[[A2AError, Scope], Refusal],
    ) -> None:
        self.app = app
        self.authenticator = authenticator
        self.encode_error = encode_error
        self.challenge = authenticator.www_authenticate.encode("latin-1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            principal = await self.authenticator.authenticate(http_credentials(scope))
        except UnauthenticatedError as error:
            await self._refuse(send, error, self.challenge, scope)
            return
        except PermissionDeniedError as error:
            challenge = b'Bearer realm="a2a", error="insufficient_scope"'
            await self._refuse(send, error, challenge, scope)
            return
        except A2AError as error:  # the keys to check a token could not be fetched
            body, headers = self.encode_error(error, scope)
            await send_body(send, error.http_status, body, headers)
            return
        scope["user"] = principal
        await self.app(scope, receive, send)

    async def _refuse(self, send: Send, error: A2AError, challenge: bytes, scope: Scope) -> None:
        body, headers = self.encode_error(error, scope)
        await send_body(send, error.http_status, body, [*headers, (b"www-authenticate", challenge)])


class Challenging:
    """Gives every 401 ``app`` answers the ``WWW-Authenticate`` challenge of the card's
    schemes (RFC 7235 §3.1), when it has none of its own: a 401 that the handler's
    operations raise (the extended card's function refusing a caller) is answered like
    one of the authentication layer."""

    def __init__(self, app: ASGIApp, challenge: str) -> None:
        self.app = app
        self.challenge = (b"www-authenticate", challenge.encode("latin-1"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_challenged(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                headers = list(message.get("headers", ()))
                if all(name.lower() != b"www-authenticate" for name, _ in headers):
                    message = {**message, "headers": [*headers, self.challenge]}
            await send(message)

        await self.app(scope, receive, send_challenged)
