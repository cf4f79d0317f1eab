"""Errors reach the caller as parley's classes, whatever carried them (spec 8)."""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest

from parley.client import (
    AgentUnreachableError,
    ClientTimeoutError,
    JSONRPCTransport,
    NotAnAgentError,
    StreamingASGITransport,
    connect,
)
from parley.client._transport import ClientCallContext
from parley.protocol import (
    BY_NAME,
    ERROR_CLASSES,
    A2AError,
    PermissionDeniedError,
    UnauthenticatedError,
    UnsupportedOperationError,
)
from parley.server.bindings._jsonrpc import failure
from parley.types import AgentCapabilities, TaskQueryParams
from tests.client.agents import slow_app

CONTEXT = ClientCallContext()


def answering(status: int, body: bytes, content_type: bytes = b"application/json") -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        headers = [(b"content-type", content_type)]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def transport_to(app: Any) -> JSONRPCTransport:
    http = httpx.AsyncClient(transport=StreamingASGITransport(app))
    return JSONRPCTransport("http://agent.local/", http)


@pytest.mark.parametrize("error_class", ERROR_CLASSES, ids=lambda c: c.__name__)
async def test_every_error_code_becomes_its_class(error_class: type[A2AError]) -> None:
    """Spec 8.1, 8.2: each JSON-RPC error code, as parley's server encodes it, is raised
    as the same class, with its message and data."""
    body = failure(1, error_class("what went wrong", data={"field": "x"}))
    transport = transport_to(answering(200, body))
    with pytest.raises(error_class) as raised:
        await transport.request(BY_NAME["get_task"], TaskQueryParams(id="t"), ClientCallContext())
    assert type(raised.value) is error_class
    assert raised.value.message == "what went wrong"
    assert raised.value.data == {"field": "x"}


@pytest.mark.parametrize("error_class", ERROR_CLASSES, ids=lambda c: c.__name__)
async def test_every_error_code_in_a_stream_becomes_its_class(error_class: type[A2AError]) -> None:
    """Spec 7.2, 8: an error sent as an SSE event ends the stream with its class."""
    body = b"data: " + failure(1, error_class("mid-stream")) + b"\n\n"
    transport = transport_to(answering(200, body, b"text/event-stream"))
    with pytest.raises(error_class):
        async for _ in transport.stream(
            BY_NAME["resubscribe"], TaskQueryParams(id="t"), ClientCallContext()
        ):
            pass


async def test_unknown_code_keeps_its_code() -> None:
    """Spec 8: an implementation-defined code arrives as A2AError with that code."""
    body = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32099,"message":"custom"}}'
    transport = transport_to(answering(200, body))
    with pytest.raises(A2AError) as raised:
        await transport.request(BY_NAME["get_task"], TaskQueryParams(id="t"), ClientCallContext())
    assert raised.value.code == -32099
    assert raised.value.message == "custom"


@pytest.mark.parametrize(
    ("status", "error_class"), [(401, UnauthenticatedError), (403, PermissionDeniedError)]
)
async def test_refused_credentials(status: int, error_class: type[A2AError]) -> None:
    """Spec 4.4: HTTP 401/403 are UnauthenticatedError / PermissionDeniedError."""
    transport = transport_to(answering(status, b"nope", b"text/plain"))
    with pytest.raises(error_class):
        await transport.request(BY_NAME["get_task"], TaskQueryParams(id="t"), ClientCallContext())


async def test_html_page_is_not_an_agent() -> None:
    """Spec 3.2.1: an answer that is not JSON-RPC is NotAnAgentError naming the status."""
    transport = transport_to(answering(200, b"<html></html>", b"text/html"))
    with pytest.raises(NotAnAgentError, match="HTTP 200"):
        await transport.request(BY_NAME["get_task"], TaskQueryParams(id="t"), ClientCallContext())


async def test_nothing_listening_is_unreachable() -> None:
    """Spec 3.1: a transport failure is AgentUnreachableError, never an httpx error."""
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    transport = JSONRPCTransport(f"http://127.0.0.1:{port}/")
    try:
        with pytest.raises(AgentUnreachableError):
            await transport.request(
                BY_NAME["get_task"], TaskQueryParams(id="t"), ClientCallContext()
            )
    finally:
        await transport.aclose()


async def test_streaming_refused_when_the_card_says_no() -> None:
    """Spec 7.2: an agent whose card has streaming false answers -32004."""
    app = slow_app(0, capabilities=AgentCapabilities(streaming=False))
    async with connect(app) as client:
        with pytest.raises(UnsupportedOperationError):
            async for _ in client.stream_message("hi"):
                pass


async def test_per_call_timeout() -> None:
    """Spec 3.1 (client timeouts): ClientCallContext.timeout bounds one call."""
    async with connect(slow_app(2)) as client:
        with pytest.raises(ClientTimeoutError):
            await client.send_message("hi", context=ClientCallContext(timeout=0.2))
        with pytest.raises(ClientTimeoutError):
            async for _ in client.stream_message("hi", context=ClientCallContext(timeout=0.2)):
                pass
