"""SSE load driver: N concurrent message/stream calls, again and again, for D seconds.

Prints one JSON line: streams and events completed, events per second, and the p50 and
p99 time of a whole stream. The same driver runs against every target; it checks each
stream ended with a final status so a broken target cannot look fast.

    python bench/stream_driver.py URL [--streams 50] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
import uuid

import httpx

_ids = itertools.count()


def _body() -> bytes:
    number = next(_ids)
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": number,
            "method": "message/stream",
            "params": {
                "message": {
                    "kind": "message",
                    "messageId": str(uuid.uuid4()),
                    "role": "user",
                    "parts": [{"kind": "text", "text": "stream"}],
                }
            },
        }
    ).encode()


async def _one_stream(client: httpx.AsyncClient, url: str) -> int:
    events = 0
    final = False
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    async with client.stream("POST", url, content=_body(), headers=headers) as response:
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                events += 1
                final = '"final":true' in line.replace(" ", "")
    if not final:
        raise RuntimeError("a stream ended without a final status update")
    return events


async def drive(url: str, streams: int, seconds: float) -> dict[str, float]:
    limits = httpx.Limits(max_connections=streams, max_keepalive_connections=streams)
    durations: list[float] = []
    events = 0
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal events
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                received = await _one_stream(client, url)
                events += received  # after the await: no update is lost between workers
                durations.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(streams)))
        elapsed = time.perf_counter() - started
    durations.sort()
    return {
        "streams": len(durations),
        "events": events,
        "seconds": round(elapsed, 2),
        "events_per_s": round(events / elapsed, 1),
        "p50_ms": round(durations[len(durations) // 2] * 1000, 2),
        "p99_ms": round(durations[min(len(durations) - 1, int(len(durations) * 0.99))] * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10)
    options = parser.parse_args()
    print(json.dumps(asyncio.run(drive(options.url, options.streams, options.seconds))))


if __name__ == "__main__":
    main()
