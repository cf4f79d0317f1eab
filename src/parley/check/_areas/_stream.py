"""Streams: the first event, SSE framing, event shapes, the final event ending the
stream; subscribe of unknown and finished tasks; streaming refused when not declared."""

from __future__ import annotations

import json
from typing import Any

from parley.check._areas._tasks import GREETING, an_ended_task
from parley.check._areas._wire import message_json, rest_path, rpc, unknown_task_id
from parley.check._model import JSONRPC, REST, V1_0, Failed, Level, Needs, check, cut
from parley.check._probe import Probe
from parley.protocol import TaskNotFoundError, UnsupportedOperationError, ends_interaction
from parley.types import Message, Task

_STREAMING = "streaming"
_V1_EVENTS = {"task", "message", "statusUpdate", "artifactUpdate"}


@check(
    "stream.events",
    "A stream starts with a Task or Message and closes after its final event",
    Level.must,
    v03="7.2",
    v10="3.1.2",
    needs=Needs(capability=_STREAMING),
)
async def events(probe: Probe) -> None:
    client = await probe.client()
    seen: list[Any] = []
    try:
        async for event in client.stream_message(GREETING):
            seen.append(event)
    except Exception as error:
        probe.record("stream_message", "\n".join(_text(e) for e in seen) + f"\n{error!r}")
        raise
    probe.record(
        f"stream_message ({probe.version} over {probe.binding})", "\n".join(_text(e) for e in seen)
    )
    if not seen:
        raise Failed("the stream closed with no event")
    if not isinstance(seen[0], Task | Message):
        raise Failed(f"the first event is a {type(seen[0]).__name__}, not a Task or Message")
    if isinstance(seen[0], Message) and len(seen) > 1:
        raise Failed("a stream that answered a Message went on with more events")
    if isinstance(seen[0], Task) and not ends_interaction(seen[-1]):
        raise Failed("the stream closed before a final event (terminal or interrupted state)")


@check(
    "stream.sse",
    "A stream over HTTP is text/event-stream whose every event is one JSON answer",
    Level.must,
    v03="3.3.1",
    v10="9.4.2",
    needs=Needs(capability=_STREAMING, bindings=(JSONRPC, REST)),
)
async def sse(probe: Probe) -> None:
    message = message_json(probe, GREETING)
    assert probe.surface is not None
    if probe.binding == JSONRPC:
        url, body = probe.surface.url, rpc(probe, "stream_message", {"message": message})
    else:
        _, path = rest_path(probe, "stream_message")
        url, body = probe.surface.url.rstrip("/") + path, {"message": message}
    headers = await probe.headers()
    headers.update({"Content-Type": "application/json", "Accept": "text/event-stream"})
    async with probe.agent.http.stream(
        "POST", url, json=body, headers=headers, timeout=probe.agent.call_timeout
    ) as response:
        kind = response.headers.get("content-type", "")
        text = (await response.aread()).decode(errors="replace")
    probe.record(
        f"POST {url}\n\n{json.dumps(body)}",
        f"HTTP {response.status_code}\ncontent-type: {kind}\n\n{text}",
    )
    if response.status_code != 200 or not kind.startswith("text/event-stream"):
        raise Failed(f"HTTP {response.status_code} {kind!r}, not 200 text/event-stream")
    datas = _data_of_events(text)
    if not datas:
        raise Failed("the stream has no event with data")
    for data in datas:
        _one_answer(probe, data)


def _data_of_events(text: str) -> list[str]:
    """The data of each SSE event (lines ``data:`` joined, per the SSE standard)."""
    found = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = [
            line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")
        ]
        if lines:
            found.append("\n".join(lines))
    return found


def _one_answer(probe: Probe, data: str) -> None:
    try:
        event = json.loads(data)
    except ValueError:
        raise Failed(f"an event's data is not JSON: {cut(data, 200)}") from None
    if not isinstance(event, dict):
        raise Failed(f"an event is not a JSON object: {cut(data, 200)}")
    if probe.binding == JSONRPC:
        if event.get("jsonrpc") != "2.0" or event.get("id") != 1 or "result" not in event:
            raise Failed(f"an event is not a JSON-RPC response to the request: {cut(data, 200)}")
        event = event["result"]
    if probe.version == V1_0 and (len(event) != 1 or not set(event) <= _V1_EVENTS):
        raise Failed(
            f"a v1.0 event is not a StreamResponse (one of {sorted(_V1_EVENTS)}): {cut(data, 200)}"
        )


@check(
    "stream.subscribe-not-found",
    "subscribe to an unknown task is TaskNotFoundError",
    Level.must,
    v03="7.9",
    v10="3.1.6",
    needs=Needs(capability=_STREAMING),
)
async def subscribe_not_found(probe: Probe) -> None:
    client = await probe.client()
    await probe.error(
        "resubscribe", _drain(client.resubscribe(unknown_task_id())), TaskNotFoundError
    )


@check(
    "stream.subscribe-ended",
    "subscribe to a task in a terminal state is UnsupportedOperationError",
    Level.must,
    v10="3.1.6",
    needs=Needs(capability=_STREAMING, versions=(V1_0,)),
)
async def subscribe_ended(probe: Probe) -> None:
    task = await an_ended_task(probe)
    client = await probe.client()
    await probe.error(
        "subscribe to the ended task",
        _drain(client.resubscribe(task.id)),
        UnsupportedOperationError,
    )


@check(
    "stream.not-declared",
    "Streaming from an agent that does not declare it is UnsupportedOperationError",
    Level.must,
    v03="8.2",
    v10="3.3.4",
    needs=Needs(capability="!streaming"),
)
async def not_declared(probe: Probe) -> None:
    client = await probe.client()
    await probe.error(
        "stream_message", _drain(client.stream_message(GREETING)), UnsupportedOperationError
    )


async def _drain(events: Any) -> list[Any]:
    return [event async for event in events]


def _text(event: Any) -> str:
    return event.to_json().decode() if hasattr(event, "to_json") else repr(event)
