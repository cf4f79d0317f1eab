"""A stream cut halfway is resumed through tasks/resubscribe with Last-Event-ID (spec 7.9,
and parley's invariant: every event once, in order)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from parley.client import Client, StreamInterruptedError, TaskTracker, connect, text_of
from parley.client._client import send_params
from parley.protocol import BY_NAME
from parley.types import TaskState
from tests.client.agents import ticking_app
from tests.servers import running

TICKS = 8
PARAMS = send_params("go", None, None, None, None)


class CuttingTransport(httpx.AsyncBaseTransport):
    """Real HTTP, but the n-th event stream breaks after ``after[n]`` events."""

    def __init__(self, *after: int) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.after = list(after)
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        response = await self.inner.handle_async_request(request)
        is_stream = "text/event-stream" in response.headers.get("content-type", "")
        if not is_stream or not self.after:
            return response
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Cut(response, self.after.pop(0)),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Cut(httpx.AsyncByteStream):
    def __init__(self, response: httpx.Response, after: int) -> None:
        self.response = response
        self.after = after

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        buffer = b""
        if self.after == 0:
            raise httpx.RemoteProtocolError("connection dropped (test)")
        async for chunk in self.response.aiter_raw():
            buffer += chunk
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                yield event + b"\n\n"
                seen += 1
                if seen == self.after:
                    raise httpx.RemoteProtocolError("connection dropped (test)")

    async def aclose(self) -> None:
        await self.response.aclose()


async def uncut_ids(client: Client) -> list[str]:
    return [event.kind async for event in client.stream_message("go")]


@pytest.mark.parametrize("after", [1, 3, TICKS])
async def test_cut_stream_is_resumed_with_nothing_lost_or_repeated(after: int) -> None:
    """Spec 7.9: the client resubscribes with Last-Event-ID; the caller sees the same
    events as an uncut stream, in order, with strictly increasing sequence numbers."""
    with running(ticking_app(TICKS, interval=0.1)) as url:
        async with connect(url, protocol="0.3") as reference:
            expected = await uncut_ids(reference)
        cutter = CuttingTransport(after)
        async with (
            httpx.AsyncClient(transport=cutter) as http,
            connect(url, http_client=http, protocol="0.3") as client,
        ):
            tracker = TaskTracker()
            ids: list[int | None] = []
            kinds: list[str] = []
            async for item in client.stream(BY_NAME["stream_message"], PARAMS):
                tracker.apply(item.event)
                ids.append(item.id)
                kinds.append(item.event.kind)
    assert kinds == expected
    numbers = [i for i in ids if i is not None]
    assert numbers == sorted(set(numbers))
    assert len(numbers) == len(ids)
    assert tracker.state is TaskState.completed
    assert text_of(tracker.task) == "".join(f"tick {n}\n" for n in range(TICKS))
    resumed = [r for r in cutter.requests if b"tasks/resubscribe" in r.content]
    assert len(resumed) == 1
    assert resumed[0].headers["last-event-id"] == str(numbers[after - 1])


async def test_gives_up_after_max_resumes() -> None:
    """Spec 7.9: resumption is bounded: after ``max_resumes`` attempts in a row that
    bring no event, StreamInterruptedError reaches the caller."""
    with running(ticking_app(TICKS, interval=0.05)) as url:
        cutter = CuttingTransport(1, 0, 0, 0)
        async with (
            httpx.AsyncClient(transport=cutter) as http,
            connect(url, http_client=http, max_resumes=2, protocol="0.3") as client,
        ):
            client.resume_delay = 0
            with pytest.raises(StreamInterruptedError):
                async for _ in client.stream_message("go"):
                    pass
    assert len([r for r in cutter.requests if b"tasks/resubscribe" in r.content]) == 2
