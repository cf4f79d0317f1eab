"""The inspector's door: it can reach any URL for whoever can use it, so it answers only
its own page.

- the ``Host`` header must be one the inspector is served at (a DNS-rebinding page on
  another name is refused);
- an ``Origin``, when the browser sends one, must be the inspector's own (another site's
  page is refused);
- every request carries the secret token: the address printed and opened carries it in
  its query string, once, which sets a cookie (``HttpOnly``, ``SameSite=Strict``) and
  redirects to the same address without it, as notebook servers do.

Push notifications (``/push/...``) come from the agent, which has no cookie: they pass on
``Host`` alone, and the receiver checks their signature and token instead.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_PARAMETER = "token"


class Guard:
    """ASGI middleware admitting only requests to ``hosts`` that carry ``token``.

    ``hosts``: the ``Host`` values accepted (``host:port``); empty accepts any (an
    inspector served on a wildcard address, where the name is not known).
    """

    def __init__(self, app: ASGIApp, token: str, hosts: Collection[str], cookie: str) -> None:
        self.app = app
        self.token = token
        self.hosts = {host.lower() for host in hosts}
        self.cookie = cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> Response | None:
        """The answer to a request that may not pass, or ``None``."""
        headers = Headers(scope=scope)
        host = headers.get("host", "").lower()
        if self.hosts and host not in self.hosts:
            return _forbidden(f"this inspector is not served as {host or 'no host'}")
        origin = headers.get("origin")
        if origin is not None and origin.lower() != f"{scope.get('scheme', 'http')}://{host}":
            return _forbidden(f"requests from {origin} are not accepted")
        if scope["path"].startswith("/push/"):
            return None
        query = dict(parse_qsl(scope.get("query_string", b"").decode()))
        given = query.pop(TOKEN_PARAMETER, None)
        if given is not None and secrets.compare_digest(given.encode(), self.token.encode()):
            return self._admit(scope["path"], query)
        cookie = cookie_parser(headers.get("cookie", "")).get(self.cookie)
        if cookie is not None and secrets.compare_digest(cookie.encode(), self.token.encode()):
            return None
        return _forbidden(
            "this inspector needs its token: open the address `parley inspect` printed"
        )

    def _admit(self, path: str, query: dict[str, str]) -> Response:
        target = f"{path}?{urlencode(query)}" if query else path
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict")
        return response


def _forbidden(reason: str) -> Response:
    return PlainTextResponse(f"Forbidden: {reason}\n", status_code=403)
