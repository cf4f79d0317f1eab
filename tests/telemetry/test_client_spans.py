"""parley's client with a tracer provider: each call a ``CLIENT`` span, the parent of the
agent's ``SERVER`` span; a failed call is ``ERROR`` on the client's side only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from parley.client import connect
from parley.protocol import TaskNotFoundError
from parley.server import create_app
from tests.server.agents import ScriptedAgent, card
from tests.telemetry.recording import Recording, recording


@pytest.fixture
def recorded() -> Iterator[Recording]:
    yield from recording()


async def test_each_call_is_a_client_span_the_server_span_s_parent(recorded: Recording) -> None:
    app = create_app(ScriptedAgent(), card(), **recorded.providers)
    async with connect(app, **recorded.providers) as client:
        events = [event async for event in client.stream_message("chunks 2")]
        with pytest.raises(TaskNotFoundError):
            await client.get_task("missing")
    task_id = events[-1].task_id  # type: ignore[union-attr]
    calling = recorded.span("SendStreamingMessage", SpanKind.CLIENT, a2a_task_id=task_id)
    served = await recorded.finished("SendStreamingMessage", SpanKind.SERVER, a2a_task_id=task_id)
    assert served.parent is not None
    assert served.parent.span_id == calling.context.span_id
    assert (calling.attributes or {})["a2a.task.state"] == "TASK_STATE_COMPLETED"
    failed = recorded.span("GetTask", SpanKind.CLIENT, a2a_task_id="missing")
    assert failed.status.status_code is StatusCode.ERROR
    assert (failed.attributes or {})["error.type"] == "-32001"
    refused = await recorded.finished("GetTask", SpanKind.SERVER, a2a_task_id="missing")
    assert refused.status.status_code is StatusCode.UNSET
    points = recorded.points("a2a.client.request.duration")
    assert {p.attributes["a2a.method.name"] for p in points} == {"SendStreamingMessage", "GetTask"}
