"""Log records carry the trace context while a span is active; and with no provider
given and none set globally, nothing is traced at all: the bindings call the handler
itself, and the client makes no span."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from parley.client import connect
from parley.server import create_app
from parley.telemetry import JSONFormatter, TraceContextFilter, open_telemetry
from parley.types import Task
from tests.server.agents import ScriptedAgent, card
from tests.telemetry.recording import Recording, recording


@pytest.fixture
def recorded() -> Iterator[Recording]:
    yield from recording()


def _logger() -> tuple[logging.Logger, io.StringIO]:
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.addFilter(TraceContextFilter())
    handler.setFormatter(JSONFormatter())
    logger = logging.getLogger("tests.telemetry.logs")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger, written


def test_a_record_logged_in_a_span_names_its_trace_and_span(recorded: Recording) -> None:
    logger, written = _logger()
    with recorded.tracer().start_as_current_span("work") as span:
        logger.info("inside", extra={"task": "t-1"})
    logger.info("outside")
    inside, outside = (json.loads(line) for line in written.getvalue().splitlines())
    context = span.get_span_context()
    assert inside["trace_id"] == format(context.trace_id, "032x")
    assert inside["span_id"] == format(context.span_id, "016x")
    assert inside["message"] == "inside"
    assert inside["task"] == "t-1"
    assert inside["level"] == "INFO"
    assert "trace_id" not in outside


def test_with_no_sdk_configured_nothing_is_traced() -> None:
    assert open_telemetry() is None  # the tests never set the global providers
    app = create_app(ScriptedAgent(), card())
    assert app.handler.telemetry is None
    assert app.jsonrpc.handler is app.handler  # the handler itself: no traced view
    assert app.rest.handler is app.handler


async def test_a_client_without_a_provider_still_carries_the_context(
    recorded: Recording,
) -> None:
    """In memory: the client makes no span of its own, but the caller's span is the
    parent of the server's."""
    app = create_app(ScriptedAgent(), card(), **recorded.providers)
    assert app.jsonrpc.handler is not app.handler
    assert app.jsonrpc.handler.card is app.handler.card  # all else is the handler's, live
    async with connect(app) as client:
        assert client.telemetry is None
        with recorded.tracer().start_as_current_span("caller") as caller:
            task = await client.send_message("echo in memory")
    assert isinstance(task, Task)
    served = await recorded.finished("SendMessage", a2a_task_id=task.id)
    assert served.parent is not None
    assert served.parent.span_id == caller.get_span_context().span_id
    assert [span.name for span in recorded.spans()].count("SendMessage") == 1
