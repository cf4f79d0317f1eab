"""The JSON-RPC 2.0 transport (spec 3.2.1, 7): POST to the card's URL, SSE for streams.

SSE is read by ``httpx-sse``; every foreign failure is translated in
``_http.translated``. HTTP 401/403 become ``UnauthenticatedError`` /
``PermissionDeniedError``; any answer that is not a JSON-RPC response becomes
``NotAnAgentError``.

With ``protocol="1.0"`` it speaks v1.0.1 §9 (``_dialect.V1Dialect``): the methods
``SendMessage``, ``GetTask``, ..., ProtoJSON params and results, and ``A2A-Version: 1.0``
on every request; errors keep their JSON-RPC codes, and an ``ErrorInfo`` reason in
``data`` names the class when the code is one parley does not know.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import httpx
import httpx_sse

from parley.client._results import decode_result
from parley.client._transport import ClientCallContext, StreamItem, Timeouts
from parley.client.transports._dialect import v1_dialect
from parley.client.transports._http import (
    HTTPBinding,
    StreamPosition,
    empty_answer,
    http_headers,
    http_timeout,
    is_event_stream,
    not_an_agent,
    refused,
    translated,
)
from parley.protocol import A2AError, InvalidAgentResponseError, Operation
from parley.protocol._versions import V0_3, V1_0
from parley.types import A2AModel


class JSONRPCTransport(HTTPBinding):
    """Talks JSON-RPC 2.0 over HTTP to one agent URL.

    ``dialect``: the method names and shapes to speak (v0.3 by default; see
    ``JSONRPCDialect``). ``http_client``: an ``httpx.AsyncClient`` to share (its base
    URL, auth, TLS and proxies apply; the transport sets per-call timeouts from
    ``timeouts``). Without one the transport makes its own and closes it in ``aclose``.
    """

    def __init__(
        self,
        url: str,
        http_client: httpx.AsyncClient | None = None,
        *,
        timeouts: Timeouts | None = None,
        dialect: JSONRPCDialect | None = None,
        protocol: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(url, http_client, timeouts)
        self.protocol = protocol if protocol in _VERSIONS else V0_3
        """The A2A version this transport speaks."""
        dialect_of, self.version = _VERSIONS[self.protocol]
        """``version``: the ``A2A-Version`` header of every request (v1.0.1 §3.6.1; none
        for 0.3)."""
        self.dialect: JSONRPCDialect = dialect or dialect_of(options.get("tenant"))
        self._ids = itertools.count(1)

    async def request(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> Any:
        request_id = next(self._ids)
        content = self.dialect.body(request_id, operation, params)
        with translated(self.url):
            response = await self.http.post(
                self.url,
                content=content,
                headers={**http_headers(context, stream=False), **self.version},
                params=context.query,
                timeout=http_timeout(self.timeouts, operation),
            )
        if empty_answer(operation, response, response.content):
            return None
        result = unwrap(
            request_id,
            response,
            response.content,
            self.dialect.error,
            null_result=operation.result is None,
        )
        return self.dialect.result(operation, params, result)

    async def stream(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> AsyncIterator[StreamItem]:
        request_id = next(self._ids)
        position = StreamPosition(last_event_id=context.last_event_id)
        content = self.dialect.body(request_id, operation, params)
        events = self.dialect.events(operation, params)
        with translated(self.url, position):
            async with httpx_sse.aconnect_sse(
                self.http,
                "POST",
                self.url,
                content=content,
                headers={**http_headers(context, stream=True), **self.version},
                params=context.query,
                timeout=http_timeout(self.timeouts, operation),
            ) as source:
                response = source.response
                if not is_event_stream(response):
                    body = await response.aread()
                    for event in events(unwrap(request_id, response, body, self.dialect.error)):
                        yield StreamItem(event, None)
                    return
                position.started = True
                async for sse in source.aiter_sse():
                    result = unwrap(request_id, response, sse.data, self.dialect.error)
                    event_id = position.delivered(sse.id)
                    *first, last = events(result)
                    for event in first:  # made up by the dialect: no id of their own
                        yield StreamItem(event, None)
                    yield StreamItem(last, event_id)


def create_jsonrpc_transport(
    url: str, http_client: httpx.AsyncClient | None = None, **options: Any
) -> JSONRPCTransport:
    """The registered factory of the ``JSONRPC`` transport."""
    return JSONRPCTransport(url, http_client, **options)


class JSONRPCDialect(Protocol):
    """What a JSON-RPC dialect changes in the transport: method names and params on the
    way out, results, stream events and error codes on the way back."""

    def body(self, request_id: int, operation: Operation, params: A2AModel | None) -> bytes:
        """The request body of ``operation``; raises ``A2AError`` for what the dialect
        cannot say."""
        ...

    def result(self, operation: Operation, params: A2AModel | None, result: Any) -> Any:
        """The ``result`` member (parsed JSON) as the operation's core result."""
        ...

    def events(self, operation: Operation, params: A2AModel | None) -> Callable[[Any], list[Any]]:
        """The decoder of one stream: each ``result`` member -> the core events it stands
        for (at least one; the last is the one the SSE event's id belongs to)."""
        ...

    def error(self, code: int, message: str | None, data: Any) -> A2AError:
        """The core error for an ``error`` member."""
        ...


class _V0_3:
    """v0.3: the operation table's method names and parley's own wire types."""

    def body(self, request_id: int, operation: Operation, params: A2AModel | None) -> bytes:
        head = b'{"jsonrpc":"2.0","id":%d,"method":"%s"' % (
            request_id,
            operation.jsonrpc_method.encode(),
        )
        if params is None:
            return head + b"}"
        return head + b',"params":%s}' % params.to_json()

    def result(self, operation: Operation, params: A2AModel | None, result: Any) -> Any:
        return decode_result(operation, result)

    def events(self, operation: Operation, params: A2AModel | None) -> Callable[[Any], list[Any]]:
        def decode(result: Any) -> list[Any]:
            return [decode_result(operation, result)]

        return decode

    def error(self, code: int, message: str | None, data: Any) -> A2AError:
        return A2AError.from_code(code, message, data)


V0_3_CODEC: JSONRPCDialect = _V0_3()

_VERSIONS: dict[str, tuple[Callable[[str | None], JSONRPCDialect], dict[str, str]]] = {
    V0_3: (lambda tenant: V0_3_CODEC, {}),
    V1_0: (v1_dialect, {"A2A-Version": V1_0}),
}
"""Each version's dialect (made for a tenant) and the headers of its every request."""


def unwrap(
    request_id: int,
    response: httpx.Response,
    body: bytes | str,
    errors: Callable[[int, str | None, Any], A2AError],
    *,
    null_result: bool = False,
) -> Any:
    """The ``result`` member of a JSON-RPC answer, or the error it carries, raised
    (built by ``errors`` from its code, message and data). With ``null_result`` (an
    operation whose result is always null) a missing ``result`` is read as null:
    a2a-sdk 0.3.26 leaves it out of its ``tasks/pushNotificationConfig/delete`` answer."""
    refused(response, body)
    try:
        envelope = json.loads(body)
    except ValueError:
        raise not_an_agent(response, "a JSON-RPC response") from None
    if not isinstance(envelope, dict) or envelope.get("jsonrpc") != "2.0":
        raise not_an_agent(response, "a JSON-RPC response")
    error = envelope.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        message = error.get("message")
        raise errors(
            code if isinstance(code, int) else -32603,
            message if isinstance(message, str) else None,
            error.get("data"),
        )
    if "result" not in envelope and not null_result:
        raise not_an_agent(response, "a JSON-RPC response (it has neither result nor error)")
    if envelope.get("id") != request_id:
        raise InvalidAgentResponseError(
            f"The agent answered request {request_id} with id {envelope.get('id')!r}"
        )
    return envelope.get("result")
