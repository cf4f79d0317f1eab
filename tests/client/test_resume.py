"""A stream cut halfway is resumed through tasks/resubscribe with Last-Event-ID (spec 7.9,
and parley's invariant: every event once, in order)."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest

from parley.client import (
    AgentUnreachableError,
    Client,
    StreamInterruptedError,
    TaskTracker,
    connect,
    text_of,
)
from parley.client._client import send_params
from parley.protocol import BY_NAME
from parley.server.tasks._recovery import RESTARTED
from parley.types import TaskState
from tests.client.agents import ticking_app
from tests.servers import parley_address, running, start_parley

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


class _Counting(httpx.AsyncBaseTransport):
    """Real HTTP; counts the resubscribe attempts, refused or not."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.resubscribes = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if b"subscribe" in request.content.lower():  # tasks/resubscribe, SubscribeToTask
            self.resubscribes += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _parley_serve(database: Path, log: Path, port: int = 0) -> subprocess.Popen[bytes]:
    """``parley serve`` of the slow agent on ``database`` (``log``: a file of its own)."""
    arguments = ["tests.stores.slow_agent:agent", "--db", f"sqlite:///{database}"]
    return start_parley(arguments, log, port=port)[0]


async def _serving(process: subprocess.Popen[bytes], log: Path) -> str:
    """The base URL of ``_parley_serve``'s process, once it answers there."""
    return await anyio.to_thread.run_sync(parley_address, process, log, 0)


async def test_a_stream_is_resumed_across_a_server_restart(tmp_path: Path) -> None:
    """Spec 7.9 with the default policy: the server is killed mid-stream and started
    again on the same database; the client keeps resubscribing with backoff until it
    answers, then gets the task's end (failed: the run was lost in the restart)."""
    database = tmp_path / "tasks.db"
    server = _parley_serve(database, tmp_path / "first.log")
    again: subprocess.Popen[bytes] | None = None
    try:
        base = await _serving(server, tmp_path / "first.log")
        counting = _Counting()
        seen = 0
        async with (
            httpx.AsyncClient(transport=counting) as http,
            connect(base, http_client=http) as client,
        ):
            tracker = TaskTracker()
            async for event in client.stream_message("go"):
                tracker.apply(event)
                seen += 1
                if seen == 5:
                    server.kill()
                    server.wait(10)
                    port = int(base.rsplit(":", 1)[1])  # the client is already retrying
                    again = _parley_serve(database, tmp_path / "again.log", port)
        assert tracker.state is TaskState.failed
        assert tracker.task is not None
        assert text_of(tracker.task.status.message) == RESTARTED
        assert counting.resubscribes >= 2  # refused while the server was down, then served
    finally:
        for process in (server, again):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(10)


async def test_a_stream_whose_server_stays_down_ends_with_stream_interrupted(
    tmp_path: Path,
) -> None:
    """Past ``resume_window`` the caller gets StreamInterruptedError (docs/client.md),
    with the last event id and the unreachable agent as its cause."""
    server = _parley_serve(tmp_path / "tasks.db", tmp_path / "serve.log")
    try:
        base = await _serving(server, tmp_path / "serve.log")
        async with connect(base, resume_window=1.5) as client:

            async def follow_and_kill() -> None:
                seen = 0
                async for _ in client.stream_message("go"):
                    seen += 1
                    if seen == 5:
                        server.kill()
                        server.wait(10)

            with pytest.raises(StreamInterruptedError) as raised:
                await follow_and_kill()
        assert raised.value.last_event_id is not None
        assert raised.value.last_event_id >= 5
        assert isinstance(raised.value.__cause__, AgentUnreachableError)
        assert "could not be resumed" in raised.value.message
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(10)
