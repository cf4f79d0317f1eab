"""The JSON-RPC 2.0 transport (spec 3.2.1, 7): POST to the card's URL, SSE for streams.

SSE is read by ``httpx-sse``; every foreign failure is translated in
``_http.translated``. HTTP 401/403 become ``UnauthenticatedError`` /
``PermissionDeniedError``; any answer that is not a JSON-RPC response becomes
``NotAnAgentError``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx_sse

from parley.client._results import decode_result
from parley.client._transport import ClientCallContext, StreamItem, Timeouts
from parley.client.transports._http import (
    StreamPosition,
    http_headers,
    http_timeout,
    not_an_agent,
    refused,
    translated,
)
from parley.protocol import A2AError, InvalidAgentResponseError, Operation
from parley.types import A2AModel


class JSONRPCTransport:
    """Talks JSON-RPC 2.0 over HTTP to one agent URL.

    ``http_client``: an ``httpx.AsyncClient`` to share (its base URL, auth, TLS and
    proxies apply; the transport sets per-call timeouts from ``timeouts``). Without one
    the transport makes its own and closes it in ``aclose``.
    """

    def __init__(
        self,
        url: str,
        http_client: httpx.AsyncClient | None = None,
        *,
        timeouts: Timeouts | None = None,
        **options: Any,
    ) -> None:
        self.url = url
        self.timeouts = timeouts or Timeouts()
        self._owns_client = http_client is None
        self.http = http_client or httpx.AsyncClient()
        self._ids = itertools.count(1)

    async def request(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> Any:
        request_id = next(self._ids)
        with translated(self.url):
            response = await self.http.post(
                self.url,
                content=_body(request_id, operation, params),
                headers=http_headers(context, stream=False),
                params=context.query,
                timeout=http_timeout(self.timeouts, operation),
            )
        return _result(operation, request_id, response, response.content)

    async def stream(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> AsyncIterator[StreamItem]:
        request_id = next(self._ids)
        position = StreamPosition(last_event_id=context.last_event_id)
        with translated(self.url, position):
            async with httpx_sse.aconnect_sse(
                self.http,
                "POST",
                self.url,
                content=_body(request_id, operation, params),
                headers=http_headers(context, stream=True),
                params=context.query,
                timeout=http_timeout(self.timeouts, operation),
            ) as source:
                response = source.response
                if not _is_event_stream(response):
                    body = await response.aread()
                    yield StreamItem(_result(operation, request_id, response, body), None)
                    return
                position.started = True
                async for sse in source.aiter_sse():
                    event_id = int(sse.id) if sse.id.isdigit() else None
                    event = _result(operation, request_id, response, sse.data)
                    if event_id is not None:
                        position.last_event_id = event_id
                    yield StreamItem(event, event_id)

    async def aclose(self) -> None:
        if self._owns_client:
            await self.http.aclose()


def create_jsonrpc_transport(
    url: str, http_client: httpx.AsyncClient | None = None, **options: Any
) -> JSONRPCTransport:
    """The registered factory of the ``JSONRPC`` transport."""
    return JSONRPCTransport(url, http_client, **options)


def _body(request_id: int, operation: Operation, params: A2AModel | None) -> bytes:
    head = b'{"jsonrpc":"2.0","id":%d,"method":"%s"' % (
        request_id,
        operation.jsonrpc_method.encode(),
    )
    if params is None:
        return head + b"}"
    return head + b',"params":%s}' % params.to_json()


def _is_event_stream(response: httpx.Response) -> bool:
    return "text/event-stream" in response.headers.get("content-type", "")


def _result(
    operation: Operation, request_id: int, response: httpx.Response, body: bytes | str
) -> Any:
    """The decoded result of a JSON-RPC answer, or the error it carries, raised."""
    refused(response)
    try:
        envelope = json.loads(body)
    except ValueError:
        raise not_an_agent(response, "a JSON-RPC response") from None
    if not isinstance(envelope, dict) or envelope.get("jsonrpc") != "2.0":
        raise not_an_agent(response, "a JSON-RPC response")
    error = envelope.get("error")
    if isinstance(error, dict):
        raise _error(error)
    if "result" not in envelope:
        raise not_an_agent(response, "a JSON-RPC response (it has neither result nor error)")
    if envelope.get("id") != request_id:
        raise InvalidAgentResponseError(
            f"The agent answered request {request_id} with id {envelope.get('id')!r}"
        )
    return decode_result(operation, envelope["result"])


def _error(error: dict[str, Any]) -> A2AError:
    code = error.get("code")
    message = error.get("message")
    return A2AError.from_code(
        code if isinstance(code, int) else -32603,
        message if isinstance(message, str) else None,
        error.get("data"),
    )
