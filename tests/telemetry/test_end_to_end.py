"""One trace across a whole A2A conversation: a caller's span -> parley's client ->
agent A (its server span, its turn) -> A's agent calls agent B with parley's client ->
B's server span and turn -> B's push notification to a webhook, whose ``traceparent``
names B's delivery attempt. Real servers on uvicorn, real webhook, the real SDK."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from parley.client import ClientConfig, ClientFactory
from parley.server import AgentContext, AgentExecutor, agent, create_app
from parley.server.push import PushSettings
from parley.types import AgentCapabilities, PushNotificationConfig, Task, TaskState
from tests.push.webhook import webhook
from tests.server.agents import ScriptedAgent, card
from tests.servers import running
from tests.telemetry.recording import Recording, recording


@pytest.fixture
def recorded() -> Iterator[Recording]:
    yield from recording()


def _parent(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def _delegating(b_url: str, hook_url: str) -> AgentExecutor:
    """Agent A: asks agent B (with parley's client), B notifying ``hook_url``."""

    @agent
    async def delegate(ctx: AgentContext) -> AsyncIterator[str]:
        async with await ClientFactory().connect(b_url) as b:
            answer = await b.send_message(
                "echo from A", push_notification_config=PushNotificationConfig(url=hook_url)
            )
        assert isinstance(answer, Task)
        yield f"B says {answer.status.state.value}"

    made: AgentExecutor = delegate
    return made


async def test_one_trace_from_the_caller_to_b_s_push_notification(recorded: Recording) -> None:
    push_card = card(
        name="agent B", capabilities=AgentCapabilities(streaming=True, push_notifications=True)
    )
    b_app = create_app(
        ScriptedAgent(),
        push_card,
        push=PushSettings(allow=["127.0.0.1/32"]),
        **recorded.providers,
    )
    with webhook() as (hook, hook_url), running(b_app) as b_url:
        a_app = create_app(_delegating(b_url, hook_url), card(name="agent A"), **recorded.providers)
        with running(a_app) as a_url:
            config = ClientConfig(tracer_provider=recorded.tracer_provider)
            with recorded.tracer().start_as_current_span("caller") as caller:
                async with await ClientFactory(config).connect(a_url) as client:
                    task = await client.send_message("go")
            assert isinstance(task, Task)
            assert task.status.state is TaskState.completed
            await hook.wait_for(3)  # B's task: submitted, working, completed

    trace_id = caller.get_span_context().trace_id
    a_client = await recorded.finished("SendMessage", SpanKind.CLIENT, a2a_task_id=task.id)
    a_server = await recorded.finished("SendMessage", SpanKind.SERVER, a2a_task_id=task.id)
    a_turn = await recorded.finished("invoke_agent agent A")
    b_turn = await recorded.finished("invoke_agent agent B")
    b_server = recorded.span("SendMessage", SpanKind.SERVER, a2a_task_id=_task_id(b_turn))
    attempts = await _attempts(recorded, hook.count())
    chain = [a_client, a_server, a_turn, b_server, b_turn, *attempts]
    assert {span.context.trace_id for span in chain} == {trace_id}
    assert _parent(a_client) == caller.get_span_context().span_id
    assert _parent(a_server) == a_client.context.span_id
    assert _parent(a_turn) == a_server.context.span_id
    assert _parent(b_server) == a_turn.context.span_id  # A's agent called B inside its turn
    assert _parent(b_turn) == b_server.context.span_id
    assert {_parent(attempt) for attempt in attempts} == {b_turn.context.span_id}
    assert {attempt.kind for attempt in attempts} == {SpanKind.CLIENT}
    # each notification carries the context of its delivery attempt
    sent = [received.headers["traceparent"].split("-") for received in hook.received]
    assert {fields[1] for fields in sent} == {format(trace_id, "032x")}
    assert {int(fields[2], 16) for fields in sent} == {a.context.span_id for a in attempts}


async def _attempts(recorded: Recording, count: int) -> list[ReadableSpan]:
    """The ``count`` delivery attempts' spans, once all have ended."""
    for _ in range(500):
        attempts = recorded.spans("a2a.push.deliver")
        if len(attempts) >= count:
            return attempts
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(recorded.spans('a2a.push.deliver'))} of {count} attempts ended")


def _task_id(span: ReadableSpan) -> str:
    return str((span.attributes or {})["a2a.task.id"])
