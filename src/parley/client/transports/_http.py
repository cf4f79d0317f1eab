"""What the HTTP transports (JSON-RPC, HTTP+JSON) share: httpx set-up, headers, limits,
and the one place where httpx and SSE failures become parley errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import httpx_sse

from parley.client._errors import (
    AgentUnreachableError,
    ClientError,
    ClientTimeoutError,
    NotAnAgentError,
    StreamInterruptedError,
)
from parley.client._transport import ClientCallContext, Timeouts
from parley.protocol import Operation, PermissionDeniedError, UnauthenticatedError


def http_timeout(timeouts: Timeouts, operation: Operation) -> httpx.Timeout:
    """The httpx limits of one call: streams and sends wait as long as the agent works."""
    waits = operation.streaming or operation.name == "send_message"
    read = timeouts.wait if waits else timeouts.read
    return httpx.Timeout(connect=timeouts.connect, read=read, write=timeouts.read, pool=None)


def http_headers(context: ClientCallContext, *, stream: bool) -> dict[str, str]:
    """The headers of one call: the caller's, extensions, and ``Last-Event-ID``."""
    headers = {"Content-Type": "application/json", **context.headers}
    if context.extensions:
        headers["X-A2A-Extensions"] = ", ".join(sorted(context.extensions))
    if stream:
        headers["Accept"] = "text/event-stream"
        if context.last_event_id is not None:
            headers["Last-Event-ID"] = str(context.last_event_id)
    return headers


class HTTPBinding:
    """What the HTTP transports share: the agent's URL, the timeouts, and the httpx
    client (one shared, or their own, which ``aclose`` closes)."""

    def __init__(
        self, url: str, http_client: httpx.AsyncClient | None, timeouts: Timeouts | None
    ) -> None:
        self.url = url
        self.timeouts = timeouts or Timeouts()
        self._owns_client = http_client is None
        self.http = http_client or httpx.AsyncClient()

    async def aclose(self) -> None:
        if self._owns_client:
            await self.http.aclose()


def is_event_stream(response: httpx.Response) -> bool:
    return "text/event-stream" in response.headers.get("content-type", "")


@dataclass(slots=True)
class StreamPosition:
    """The last event id a stream delivered, for the error that says where it stopped."""

    last_event_id: int | None = None
    started: bool = False

    def delivered(self, sse_id: str) -> int | None:
        """The event id of an SSE ``id:`` line (``None`` unless a number), now the last
        delivered."""
        event_id = int(sse_id) if sse_id.isdigit() else None
        if event_id is not None:
            self.last_event_id = event_id
        return event_id


@contextmanager
def translated(url: str, position: StreamPosition | None = None) -> Iterator[None]:
    """Turn httpx and SSE failures into parley's error tree; the one place that does."""
    try:
        yield
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol) as error:
        raise AgentUnreachableError(f"Cannot reach the agent at {url}: {_reason(error)}") from None
    except httpx.TimeoutException:
        raise ClientTimeoutError(f"The agent at {url} did not answer in time") from None
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.StreamError) as error:
        if position is not None and position.started:
            raise StreamInterruptedError(
                f"The stream from {url} broke off: {_reason(error)}",
                last_event_id=position.last_event_id,
            ) from None
        raise AgentUnreachableError(f"The connection to {url} failed: {_reason(error)}") from None
    except httpx_sse.SSEError as error:
        raise NotAnAgentError(f"{url} did not answer with an event stream: {error}") from None
    except httpx.HTTPError as error:
        raise ClientError(f"HTTP call to {url} failed: {_reason(error)}") from None


def refused(response: httpx.Response, body: bytes | str | None = None) -> None:
    """Raise for HTTP statuses that mean refused credentials (spec 4.4), with the
    server's own message when ``body`` is a JSON-RPC or REST error that has one."""
    if response.status_code == 401:
        reason = _server_message(body) or "needs credentials"
        raise UnauthenticatedError(f"The agent at {response.request.url}: {reason}")
    if response.status_code == 403:
        reason = _server_message(body) or "refused the credentials given"
        raise PermissionDeniedError(f"The agent at {response.request.url}: {reason}")


def _server_message(body: bytes | str | None) -> str | None:
    if not body:
        return None
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        payload = payload["error"]
    message = payload.get("message") if isinstance(payload, dict) else None
    return message[:300] if isinstance(message, str) else None


def empty_answer(operation: Operation, response: httpx.Response, body: bytes) -> bool:
    """Whether ``response`` answers an operation whose result is empty (a push config's
    delete) with success and no body: any 2xx, such as the ``204 No Content`` some
    agents send, is the empty result, in every binding over HTTP."""
    return operation.result is None and 200 <= response.status_code < 300 and not body.strip()


def not_an_agent(response: httpx.Response, what: str) -> NotAnAgentError:
    content_type = response.headers.get("content-type", "?").partition(";")[0]
    return NotAnAgentError(
        f"{response.request.url} answered HTTP {response.status_code} ({content_type}), not {what}",
        status_code=response.status_code,
    )


def _reason(error: Exception) -> str:
    return str(error) or type(error).__name__
