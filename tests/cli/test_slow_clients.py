"""Slow clients over real sockets: a connection whose request head, or whose declared
body, does not arrive in time is closed (the head's with a 408), however steadily its
bytes trickle; answers that take long, and idle keep-alive, are not affected. On both of
uvicorn's HTTP/1.1 protocols, and through ``parley serve``'s options."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from parley.cli._deadlines import DeadlineConfig
from parley.demo import create_demo_app
from tests.servers import parley_serve, running

DEADLINE = 1.0
"""Seconds given to the head and to the body in these tests."""
CLOSED_WITHIN = 6.0
"""Seconds by which a slow connection must be closed: the deadline and a loaded
machine's slack, far less than the trickle would take to finish."""
EVERY = 0.25
"""Seconds between two bytes of a trickle."""

HEAD = (
    b"POST / HTTP/1.1\r\nHost: agent\r\nContent-Type: application/json\r\n"
    b"Content-Length: 200\r\n\r\n"
)
SEND = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": '
    b'{"role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "hi"}]}}}'
)


@pytest.fixture(params=["httptools", "h11"])
def agent(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    config = {"head_timeout": DEADLINE, "body_timeout": DEADLINE, "http": request.param}
    with running(create_demo_app(), settings_class=DeadlineConfig, **config) as url:
        host, port = url.removeprefix("http://").split(":")
        yield host, int(port)


async def trickle(address: tuple[str, int], at_once: bytes, slowly: bytes) -> tuple[bytes, float]:
    """Send ``at_once``, then ``slowly`` a byte every ``EVERY`` seconds, reading all the
    while: what the server sent before it closed, and after how many seconds."""
    reader, writer = await asyncio.open_connection(*address)
    started = time.monotonic()
    chunks: list[bytes] = []

    async def feed() -> None:
        writer.write(at_once)
        for byte in slowly:
            await writer.drain()
            await asyncio.sleep(EVERY)
            if reader.at_eof():  # closed: a byte now would be answered by a reset
                return
            writer.write(bytes([byte]))

    async def read() -> None:  # kept chunk by chunk: a reset loses nothing read before
        while chunk := await reader.read(65536):
            chunks.append(chunk)

    feeding = asyncio.create_task(feed())
    try:
        await asyncio.wait_for(read(), CLOSED_WITHIN + 5)
    except ConnectionResetError:
        pass
    finally:
        received = b"".join(chunks)
        took = time.monotonic() - started
        feeding.cancel()
        await asyncio.gather(feeding, return_exceptions=True)  # a write to a closed peer
        writer.close()
    return received, took


async def test_a_connection_that_sends_nothing_is_closed(agent: tuple[str, int]) -> None:
    received, took = await trickle(agent, b"", b"")
    assert received.startswith(b"HTTP/1.1 408 ")
    assert DEADLINE * 0.9 <= took < CLOSED_WITHIN


async def test_a_head_that_trickles_is_closed_at_its_deadline(agent: tuple[str, int]) -> None:
    received, took = await trickle(agent, b"", HEAD)  # 23 s of bytes at this pace
    assert received.startswith(b"HTTP/1.1 408 ")
    assert took < CLOSED_WITHIN


async def test_a_body_that_trickles_is_closed_at_its_deadline(agent: tuple[str, int]) -> None:
    received, took = await trickle(agent, HEAD, SEND)
    assert received == b""  # the app was waiting for the body: nothing was answered
    assert took < CLOSED_WITHIN


async def test_many_slow_clients_are_all_closed(agent: tuple[str, int]) -> None:
    slow = [trickle(agent, b"", HEAD) for _ in range(50)]
    slow += [trickle(agent, HEAD, SEND) for _ in range(50)]
    results = await asyncio.wait_for(asyncio.gather(*slow), CLOSED_WITHIN + 20)
    assert max(took for _, took in results) < CLOSED_WITHIN + 5
    assert all(r.startswith(b"HTTP/1.1 408 ") for r, _ in results[:50])


async def test_a_second_request_on_a_kept_connection_has_its_own_deadline(
    agent: tuple[str, int],
) -> None:
    """The deadline starts again with each request: a kept-alive connection that
    answered one request quickly is still closed when its next head trickles."""
    first = HEAD.replace(b"200", str(len(SEND)).encode()) + SEND
    received, took = await trickle(agent, first, HEAD)
    assert received.startswith(b"HTTP/1.1 200 ")
    assert b"HTTP/1.1 408 " in received
    assert took < CLOSED_WITHIN + 1


async def test_an_answer_that_streams_longer_than_the_deadlines_is_not_cut(
    agent: tuple[str, int],
) -> None:
    host, port = agent
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/stream",
        "params": {
            "message": {
                "role": "user",
                "messageId": "m",
                "parts": [{"kind": "text", "text": "count to 3"}],  # one a second
            }
        },
    }
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream("POST", f"http://{host}:{port}/", json=body) as answer,
    ):
        events = [line async for line in answer.aiter_lines() if line.startswith("data:")]
    assert '"completed"' in events[-1]


def test_parley_serve_takes_the_deadlines_as_options(tmp_path: Path) -> None:
    options = ["--db", "memory", "--timeout-request-head", "1", "--timeout-request-body", "1"]
    with parley_serve(options, tmp_path / "serve.log") as (_, base):
        host, port = base.removeprefix("http://").split(":")
        address = (host, int(port))
        (head, head_took), (body, body_took) = asyncio.run(_both(address))
    assert head.startswith(b"HTTP/1.1 408 ")
    assert head_took < CLOSED_WITHIN
    assert body == b""
    assert body_took < CLOSED_WITHIN


async def _both(address: tuple[str, int]) -> list[tuple[bytes, float]]:
    return list(await asyncio.gather(trickle(address, b"", HEAD), trickle(address, HEAD, SEND)))
