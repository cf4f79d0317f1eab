"""``Probe``: what one check run is given, on one surface (version and binding) or on
the agent as a whole, and the record of every exchange it makes.

Checks speak to the agent two ways: through parley's ``Client``, bound to exactly the
surface checked, for the operations as any client makes them (answers are validated as
they are read); and raw (``jsonrpc``, ``http``, ``grpc``) where a check must send
something malformed on purpose or look at statuses and headers the client hides.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from parley.check._agent import Agent, Surface
from parley.check._model import EARLY, V1_0, Exchange, Failed, cut
from parley.client import Client, ClientConfig, ClientFactory, Timeouts
from parley.protocol import A2AError

T = TypeVar("T")
VERSION_HEADER = "A2A-Version"


@dataclass
class GrpcAnswer:
    """What a unary gRPC call answered: the status name (``OK``...) and its details."""

    code: str
    details: str
    body: bytes = b""
    trailers: dict[str, str] = field(default_factory=dict)


@dataclass
class Probe:
    agent: Agent
    surface: Surface | None = None
    version: str | None = None
    exchanges: list[Exchange] = field(default_factory=list)
    _stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    _client: Client | None = None

    # -- evidence ----------------------------------------------------------------------

    def record(self, request: str, answer: str) -> None:
        self.exchanges.append(Exchange(cut(request), cut(answer)))

    async def aclose(self) -> None:
        await self._stack.aclose()

    @property
    def binding(self) -> str:
        assert self.surface is not None, "a surface check"
        return self.surface.binding

    @property
    def v1(self) -> bool:
        return self.version == V1_0

    # -- through parley's client -------------------------------------------------------

    async def client(self) -> Client:
        """A client that speaks this surface's version over its binding only."""
        if self._client is None:
            surface = self.surface
            card = self.agent.card
            if surface is None or card is None:
                raise Failed(f"no usable card: {self.agent.card_problem or 'none served'}")
            config = ClientConfig(
                transports=[surface.binding],
                protocol=surface.version,
                http_client=self.agent.http,
                interceptors=self.agent.interceptors,
                timeouts=Timeouts(read=self.agent.call_timeout, wait=self.agent.call_timeout),
                tls=self.agent.tls,
                extended_card=False,
                max_resumes=0,
                resume_window=0.0,
            )
            if surface.version == EARLY:
                card = card.model_copy(update={"url": surface.url})
            self._client = await self._stack.enter_async_context(ClientFactory(config).create(card))
        return self._client

    async def ok(self, label: str, call: Awaitable[T]) -> T:
        """The result of ``call``; ``Failed`` when the agent answers an error."""
        try:
            result = await call
        except A2AError as error:
            self.record(self._said(label), _error_text(error))
            raise Failed(f"{label}: the agent answered {_error_text(error)}") from None
        self.record(self._said(label), _result_text(result))
        return result

    async def error(
        self,
        label: str,
        call: Awaitable[Any],
        expected: type[A2AError] | tuple[type[A2AError], ...],
    ) -> A2AError:
        """The error ``call`` raises; ``Failed`` unless it is one of ``expected``."""
        names = " or ".join(
            e.__name__ for e in (expected if isinstance(expected, tuple) else (expected,))
        )
        try:
            result = await call
        except A2AError as error:
            self.record(self._said(label), _error_text(error))
            if not isinstance(error, expected):
                raise Failed(
                    f"{label}: expected {names}, the agent answered {_error_text(error)}"
                ) from None
            return error
        self.record(self._said(label), _result_text(result))
        raise Failed(f"{label}: expected {names}, the agent answered a result")

    def _said(self, label: str) -> str:
        return f"{label} ({self.version} over {self.binding})" if self.surface else label

    # -- raw -----------------------------------------------------------------------------

    async def headers(self, *, anonymous: bool = False) -> dict[str, str]:
        headers = {} if anonymous else dict((await self.agent.auth())[0])
        if self.v1:
            headers[VERSION_HEADER] = V1_0
        return headers

    async def jsonrpc(
        self,
        body: dict[str, Any] | bytes,
        *,
        headers: dict[str, str] | None = None,
        anonymous: bool = False,
        content_type: str | None = "application/json",
    ) -> httpx.Response:
        """POST ``body`` (JSON, or bytes as they are) to the surface's URL."""
        assert self.surface is not None
        return await self.http("POST", self.surface.url, body, headers, anonymous, content_type)

    async def rest(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | bytes | None = None,
        *,
        headers: dict[str, str] | None = None,
        anonymous: bool = False,
        content_type: str | None = "application/json",
    ) -> httpx.Response:
        """``method`` ``path`` under the surface's URL."""
        assert self.surface is not None
        url = self.surface.url.rstrip("/") + path
        return await self.http(method, url, body, headers, anonymous, content_type)

    async def http(
        self,
        method: str,
        url: str,
        body: dict[str, Any] | bytes | None,
        headers: dict[str, str] | None,
        anonymous: bool,
        content_type: str | None,
    ) -> httpx.Response:
        sent = await self.headers(anonymous=anonymous)
        sent.update(headers or {})
        content = json.dumps(body).encode() if isinstance(body, dict) else body
        if content is not None and content_type is not None:
            sent["Content-Type"] = content_type
        query = {} if anonymous else (await self.agent.auth())[1]
        request = (
            f"{method} {url}\n{_headers_text(sent)}\n\n{(content or b'').decode(errors='replace')}"
        )
        response = await self.agent.http.request(
            method,
            url,
            content=content,
            headers=sent,
            params=query,
            timeout=self.agent.call_timeout,
        )
        answer = f"HTTP {response.status_code}\n{_headers_text(dict(response.headers))}\n\n"
        self.record(request, answer + response.text)
        return response

    async def grpc(
        self, method: str, request: bytes, *, anonymous: bool = False, version: str | None = None
    ) -> GrpcAnswer:
        """A unary call of ``method`` with ``request`` as serialized; the service is
        this surface's version's (``version`` sets the ``a2a-version`` sent)."""
        from parley.protocol.protobuf import SERVICE, V1_SERVICE, load_grpc

        grpc = load_grpc()
        assert self.surface is not None
        service = V1_SERVICE if self.v1 else SERVICE
        metadata = [(k.lower(), v) for k, v in (await self.headers(anonymous=anonymous)).items()]
        if version is not None:
            metadata = [(k, v) for k, v in metadata if k != "a2a-version"]
            metadata.append(("a2a-version", version))
        target, secure = _grpc_target(self.surface.url)
        channel = (
            grpc.aio.secure_channel(target, grpc.ssl_channel_credentials())
            if secure
            else grpc.aio.insecure_channel(target)
        )
        said = f"gRPC /{service}/{method} {metadata} {request[:200]!r}"
        async with channel:
            call = channel.unary_unary(f"/{service}/{method}")
            try:
                body = await call(request, metadata=metadata, timeout=self.agent.call_timeout)
            except grpc.aio.AioRpcError as error:
                trailers = {k: str(v) for k, v in (error.trailing_metadata() or ())}
                answer = GrpcAnswer(error.code().name, error.details() or "", trailers=trailers)
                self.record(said, f"{answer.code}: {answer.details}")
                return answer
        self.record(said, f"OK {body[:300]!r}")
        return GrpcAnswer("OK", "", body)


def _grpc_target(url: str) -> tuple[str, bool]:
    if "://" in url:
        parts = urlsplit(url)
        secure = parts.scheme in ("grpcs", "https")
        return f"{parts.hostname}:{parts.port or (443 if secure else 80)}", secure
    host = url.rsplit(":", 1)[0]
    return url.rstrip("/"), host not in ("localhost", "127.0.0.1", "::1", "[::1]")


def _headers_text(headers: dict[str, str]) -> str:
    hidden = {"authorization", "x-api-key", "cookie", "proxy-authorization"}
    return "\n".join(
        f"{k}: {'(hidden)' if k.lower() in hidden else v}" for k, v in sorted(headers.items())
    )


def _error_text(error: A2AError) -> str:
    return f"{type(error).__name__} ({error.code}): {error.message}"


def _result_text(result: Any) -> str:
    if hasattr(result, "to_json"):
        return str(result.to_json().decode())
    if isinstance(result, list):
        return "[" + ", ".join(_result_text(item) for item in result) + "]"
    return repr(result)


def elapsed(start: float) -> float:
    return round(time.monotonic() - start, 3)
