"""parley's client, default settings, against an a2a-sdk 1.3 agent that serves only
A2A 1.0 (``peers/sdk1_server.py``) on JSON-RPC, HTTP+JSON and gRPC: it reads the card in
v1.0's shape (no ``url``, only ``supportedInterfaces``), speaks 1.0, and plays the scenario
table (v1.0.1 §3.6.3, §8.3.2)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from parley.client import Client, connect
from parley.protocol import TaskNotCancelableError, TaskNotFoundError
from parley.types import Task, TaskArtifactUpdateEvent, TaskState, TextPart
from tests.interop.sdk import serving_peer

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]


@pytest.fixture(scope="module")
def agent(sdk1: Path) -> Iterator[str]:
    with serving_peer(sdk1, "sdk1_server.py", grpc=True) as served:
        yield f"http://127.0.0.1:{served.port}"


@pytest.fixture(params=BINDINGS)
async def client(request: pytest.FixtureRequest, agent: str) -> AsyncIterator[Client]:
    async with connect(agent, transports=[request.param]) as connected:
        assert connected.transport.interface.protocol == "1.0"  # type: ignore[attr-defined]
        yield connected


def text(task: Task) -> str:
    return "".join(
        part.text for a in task.artifacts or () for part in a.parts if isinstance(part, TextPart)
    )


async def send(client: Client, words: str, **options: str) -> Task:
    result = await client.send_message(words, **options)  # type: ignore[arg-type]
    assert isinstance(result, Task)
    return result


def test_the_card_has_no_url_only_supported_interfaces(agent: str) -> None:
    """v1.0.1 §4.4.1: the SDK's card is v1.0's shape, which a v0.3 reader refuses."""
    card = httpx.get(f"{agent}/.well-known/agent-card.json").json()
    assert "url" not in card
    assert {i["protocolVersion"] for i in card["supportedInterfaces"]} == {"1.0"}


async def test_send_message(client: Client) -> None:
    """v1.0.1 §3.1.1."""
    task = await send(client, "hello")
    assert task.status.state is TaskState.completed
    assert text(task) == "echo: hello"


async def test_streaming(client: Client) -> None:
    """v1.0.1 §3.1.2: the task, updates as a one-of, read into the same event types."""
    events = [event async for event in client.stream_message("stream 3")]
    assert isinstance(events[0], Task)
    assert sum(isinstance(e, TaskArtifactUpdateEvent) for e in events) == 3
    assert events[-1].status.state is TaskState.completed  # type: ignore[union-attr]


async def test_get_task_with_history_length(client: Client) -> None:
    """v1.0.1 §3.1.3, §3.2.4."""
    task = await send(client, "hello")
    got = await client.get_task(task.id, history_length=1)
    assert got.id == task.id
    assert len(got.history or []) == 1


async def test_multi_turn(client: Client) -> None:
    """v1.0.1 §3.4."""
    first = await send(client, "ask")
    assert first.status.state is TaskState.input_required
    second = await send(client, "more", task_id=first.id, context_id=first.context_id)
    assert second.status.state is TaskState.completed
    assert text(second) == "thanks for: more"


async def test_cancel(client: Client) -> None:
    """v1.0.1 §3.1.5: the SDK's errors arrive as parley's classes (ErrorInfo reasons)."""
    waiting = await client.send_message("wait", blocking=False)
    assert isinstance(waiting, Task)
    canceled = await client.cancel_task(waiting.id)
    assert canceled.status.state is TaskState.canceled
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(waiting.id)


async def test_unknown_task(client: Client) -> None:
    """v1.0.1 §3.3.2: TaskNotFound, read from the v1.0 error of each binding."""
    with pytest.raises(TaskNotFoundError):
        await client.get_task("no-such-task")


async def test_list_tasks(client: Client) -> None:
    """v1.0.1 §3.1.4: pages with a cursor."""
    await send(client, "hello")
    await send(client, "hello")
    page = await client.list_tasks(page_size=1)
    assert len(page.tasks) == 1
    assert page.total_size >= 2
    assert page.next_page_token
    following = await client.list_tasks(page_size=1, page_token=page.next_page_token)
    assert following.tasks[0].id != page.tasks[0].id


async def test_extended_card(client: Client) -> None:
    """v1.0.1 §3.1.11: GetExtendedAgentCard, read into the core card."""
    card = await client.get_extended_card()
    assert card.name == "a2a-sdk 1.3 interop agent (extended)"
    assert card.supports_authenticated_extended_card
