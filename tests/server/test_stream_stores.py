"""Streams on every store, over real HTTP (spec 7.2 message/stream, 7.9 resubscribe):
what a stream sent is what the store kept, under the same sequence numbers.

An event's wire JSON is made once and shared by the store that writes it and the
streams that send it (``StoredEvent.to_json``); replaying a finished task's log from the
store (``Last-Event-ID: 0``) must give back every event the live stream sent, byte for
byte once parsed, with the same ids. Both ways an agent publishes are covered: one event
per ``emit`` (``TaskUpdater``, the scripted agent) and an ``@agent`` run's outputs made
without waiting, published together.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.server import AgentContext, agent, create_app
from tests.server.agents import ScriptedAgent, card
from tests.servers import running
from tests.stores.databases import STORES, served_store

_ids = itertools.count(1)
STREAMS = 8
"""Concurrent streams per trial: their events share the store's batches."""


@agent
async def chunked(ctx: AgentContext) -> AsyncIterator[str]:
    """Yields ``N`` chunks without waiting: one publish, one store write for them all."""
    for index in range(int(ctx.text.split()[1])):
        yield f"{index},"


def _request(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}


def _message(text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "kind": "message",
        "messageId": f"stream-store-{next(_ids)}",
        "parts": [{"kind": "text", "text": text}],
    }


async def _events(
    client: httpx.AsyncClient, request: dict[str, Any], headers: dict[str, str] | None = None
) -> list[tuple[int, Any]]:
    """(id, result) of every event of an SSE answer."""
    events: list[tuple[int, Any]] = []
    async with client.stream("POST", "/", json=request, headers=headers) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        raw = b"".join([chunk async for chunk in response.aiter_bytes()])
    for block in raw.split(b"\n\n"):
        if not block:
            continue
        id_line, data_line = block.split(b"\n")
        answer = json.loads(data_line.removeprefix(b"data: "))
        assert answer["id"] == request["id"], answer
        events.append((int(id_line.removeprefix(b"id: ")), answer["result"]))
    return events


async def _stream_then_replay(base: str, text: str) -> list[tuple[Any, Any]]:
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        streamed = await asyncio.gather(
            *(
                _events(client, _request("message/stream", {"message": _message(text)}))
                for _ in range(STREAMS)
            )
        )
        replayed = []
        for events in streamed:
            task_id = events[0][1]["id"]
            resubscribe = _request("tasks/resubscribe", {"id": task_id})
            replayed.append(await _events(client, resubscribe, {"Last-Event-ID": "0"}))
    return list(zip(streamed, replayed, strict=True))


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("way", ["one event per emit", "outputs published together"])
def test_what_a_stream_sent_is_what_the_store_kept(kind: str, way: str, tmp_path: Path) -> None:
    executor = ScriptedAgent() if way == "one event per emit" else chunked
    text = "chunks 5"
    with served_store(kind, tmp_path) as store:
        app = create_app(executor, card(), task_store=store)
        with running(app) as base:
            trials = asyncio.run(_stream_then_replay(base, text))
    for streamed, replayed in trials:
        ids = [event_id for event_id, _ in streamed]
        assert ids == list(range(1, len(ids) + 1))
        assert streamed[-1][1]["status"]["state"] == "completed"
        chunks = [r["artifact"]["parts"][0]["text"] for _, r in streamed if "artifact" in r]
        assert chunks == [f"{index}," for index in range(5)]
        assert replayed == streamed
