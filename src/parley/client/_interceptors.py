"""Interceptors: hooks that see every outgoing call and every answer.

An interceptor subclasses ``ClientInterceptor`` and overrides what it needs. The
``Client`` calls ``before`` for each call (it may change ``call.context``: headers,
query, extensions, timeout), ``after`` with each result or stream event, and
``failed`` with each error, in the order the interceptors were given. They run over any
transport, so the same bearer token reaches a JSON-RPC, REST or gRPC agent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from parley.client._transport import ClientCallContext
from parley.protocol import A2AError, Operation
from parley.types import A2AModel, AgentCard


@dataclass(slots=True)
class ClientCall:
    """One call as interceptors see it."""

    operation: Operation
    params: A2AModel | None
    context: ClientCallContext
    card: AgentCard | None
    """The card of the agent called, when the client has one."""


class ClientInterceptor:
    """Base of interceptors; every hook does nothing until overridden."""

    async def before(self, call: ClientCall) -> None:
        """Called before the call goes out; may change ``call.context`` and ``call.params``."""

    async def after(self, call: ClientCall, result: Any) -> None:
        """Called with the result of a call, or with each event of a stream."""

    async def failed(self, call: ClientCall, error: A2AError) -> None:
        """Called with the error a call raises (it is raised afterwards all the same)."""


class BearerAuth(ClientInterceptor):
    """Sends ``Authorization: Bearer <token>`` with every call."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def before(self, call: ClientCall) -> None:
        call.context.headers["Authorization"] = f"Bearer {self.token}"


class ExtensionsHeader(ClientInterceptor):
    """Asks for extensions with every call (``X-A2A-Extensions``, spec 3.2.6)."""

    def __init__(self, uris: Iterable[str]) -> None:
        self.uris = frozenset(uris)

    async def before(self, call: ClientCall) -> None:
        call.context.extensions = call.context.extensions | self.uris


def put_api_key(context: ClientCallContext, key: str, name: str, location: str) -> None:
    """Place an API key in a header, the query string or a cookie."""
    if location == "query":
        context.query[name] = key
    elif location == "cookie":
        cookie = context.headers.get("Cookie")
        context.headers["Cookie"] = f"{cookie}; {name}={key}" if cookie else f"{name}={key}"
    else:
        context.headers[name] = key
