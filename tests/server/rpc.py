"""JSON-RPC calls for tests: build bodies, send them, read SSE."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx

_ids = itertools.count(1)


def user_message(text: str, **fields: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        "messageId": f"m-{next(_ids)}",
        **fields,
    }


def body(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        request["params"] = params
    return request


async def call(client: httpx.AsyncClient, method: str, params: Any = None, **headers: str) -> Any:
    response = await client.post("/", json=body(method, params), headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def result(client: httpx.AsyncClient, method: str, params: Any = None) -> Any:
    answer = await call(client, method, params)
    assert "error" not in answer, answer
    return answer["result"]


async def error(client: httpx.AsyncClient, method: str, params: Any = None) -> dict[str, Any]:
    answer = await call(client, method, params)
    assert "result" not in answer, answer
    err: dict[str, Any] = answer["error"]
    return err


async def send(client: httpx.AsyncClient, text: str, **fields: Any) -> Any:
    configuration = fields.pop("configuration", None)
    params: dict[str, Any] = {"message": user_message(text, **fields)}
    if configuration is not None:
        params["configuration"] = configuration
    return await result(client, "message/send", params)


async def sse(
    client: httpx.AsyncClient,
    method: str,
    params: Any,
    headers: dict[str, str] | None = None,
    first: asyncio.Event | None = None,
) -> list[tuple[int | None, dict[str, Any]]]:
    """Every event of an SSE answer as (id, JSON-RPC response); ``first`` is set when
    the first event has arrived (the reader is subscribed: a signal, not a sleep)."""
    events: list[tuple[int | None, dict[str, Any]]] = []
    async with client.stream("POST", "/", json=body(method, params), headers=headers) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        event_id: int | None = None
        async for line in response.aiter_lines():
            if line.startswith("id:"):
                event_id = int(line[3:].strip())
            elif line.startswith("data:"):
                events.append((event_id, json.loads(line[5:])))
                event_id = None
                if first is not None:
                    first.set()
    return events
