"""Server spans with the real OpenTelemetry SDK: one ``SERVER`` span per operation on
every binding (JSON-RPC, HTTP+JSON, gRPC) and version (v0.3, v1.0, 2025-early), named
after the A2A method, its status the protocol's outcome; the agent's turn a child of it;
the caller's ``traceparent`` its parent."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from parley.client import Client, ClientConfig, ClientFactory
from parley.protocol import TaskNotFoundError
from parley.server import GRPCOptions, create_app
from parley.types import Task
from tests.dialects.early import request, send_params
from tests.server.agents import ScriptedAgent, card
from tests.servers import running
from tests.telemetry.recording import Recording, recording

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
PROTOCOLS = ("0.3", "1.0")


@pytest.fixture(scope="module")
def recorded() -> Iterator[Recording]:
    yield from recording()


@pytest.fixture(scope="module")
def agent(recorded: Recording) -> Iterator[str]:
    app = create_app(
        ScriptedAgent(), card(), grpc=GRPCOptions(host="127.0.0.1", port=0), **recorded.providers
    )
    with running(app) as base:
        yield base


@pytest.fixture(params=[(p, b) for p in PROTOCOLS for b in BINDINGS], ids="-".join)
async def client(request: pytest.FixtureRequest, agent: str) -> AsyncIterator[Client]:
    protocol, binding = request.param
    config = ClientConfig(transports=[binding], protocol=protocol)
    async with await ClientFactory(config).connect(agent) as connected:
        yield connected


def _binding(client: Client) -> tuple[str, str]:
    interface = client.transport.interface  # type: ignore[attr-defined]
    return interface.transport, interface.protocol


async def test_a_send_is_a_server_span_with_the_turn_as_its_child(
    client: Client, recorded: Recording
) -> None:
    task = await client.send_message("echo hello")
    assert isinstance(task, Task)
    transport, version = _binding(client)
    span = await recorded.finished("SendMessage", a2a_task_id=task.id)
    assert span.kind is SpanKind.SERVER
    assert span.status.status_code is StatusCode.UNSET
    attributes = dict(span.attributes or {})
    assert attributes["a2a.method.name"] == "SendMessage"
    assert attributes["a2a.transport"] == transport
    assert attributes["a2a.protocol.version"] == version
    assert attributes["a2a.task.state"] == "TASK_STATE_COMPLETED"
    assert attributes["gen_ai.conversation.id"] == task.context_id
    (turn,) = recorded.children(span)
    assert turn.name == "invoke_agent test agent"
    assert (turn.attributes or {})["a2a.task.id"] == task.id
    states = [event.attributes.get("a2a.task.state") for event in turn.events if event.attributes]
    assert states[-1] == "TASK_STATE_COMPLETED"


async def test_a_stream_s_span_lasts_until_its_last_event(
    client: Client, recorded: Recording
) -> None:
    events = [event async for event in client.stream_message("chunks 2")]
    task_id = events[-1].task_id  # type: ignore[union-attr]
    span = await recorded.finished("SendStreamingMessage", a2a_task_id=task_id)
    assert span.kind is SpanKind.SERVER
    assert (span.attributes or {})["a2a.task.state"] == "TASK_STATE_COMPLETED"
    (turn,) = recorded.children(span)
    assert turn.end_time is not None
    names = [event.name for event in turn.events]
    assert names.count("a2a.task.artifact_update") == 2


async def test_a_caller_s_mistake_is_recorded_but_is_no_server_fault(
    client: Client, recorded: Recording
) -> None:
    missing = f"no-such-task-{uuid.uuid4()}"
    with pytest.raises(TaskNotFoundError):
        await client.get_task(missing)
    span = await recorded.finished("GetTask", a2a_task_id=missing)
    assert (span.attributes or {})["error.type"] == "-32001"
    assert span.status.status_code is StatusCode.UNSET


async def test_the_caller_s_traceparent_is_the_parent(client: Client, recorded: Recording) -> None:
    with recorded.tracer().start_as_current_span("caller") as caller:
        task = await client.send_message("echo traced")
    assert isinstance(task, Task)
    span = await recorded.finished("SendMessage", a2a_task_id=task.id)
    assert span.parent is not None
    assert span.context.trace_id == caller.get_span_context().trace_id
    assert span.parent.span_id == caller.get_span_context().span_id
    assert span.parent.is_remote


async def test_the_2025_early_dialect_is_traced_too(agent: str, recorded: Recording) -> None:
    task_id = f"early-{uuid.uuid4()}"
    body = request("tasks/send", send_params(task_id, "echo early"))
    async with httpx.AsyncClient() as http:
        answer = (await http.post(agent + "/", json=body)).json()
    assert answer["result"]["status"]["state"] == "completed"
    span = await recorded.finished("SendMessage", a2a_task_id=task_id)
    assert (span.attributes or {})["a2a.transport"] == "JSONRPC"
    assert len(recorded.children(span)) == 1


async def test_requests_are_measured_by_method_transport_and_version(
    client: Client, recorded: Recording
) -> None:
    await client.send_message("echo measured")
    transport, version = _binding(client)
    points = recorded.points("a2a.server.request.duration")
    ours = [
        point
        for point in points
        if point.attributes.get("a2a.method.name") == "SendMessage"
        and point.attributes.get("a2a.transport") == transport
        and point.attributes.get("a2a.protocol.version") == version
    ]
    assert ours
    assert ours[0].count >= 1
    assert recorded.points("a2a.server.task.state_transitions")
