"""Server spans: one ``SERVER`` span per operation a binding asks the request handler
for, named after the A2A method, its status the protocol's outcome.

The seam is the request handler: every binding of every version calls the handler
method its operation names, so ``serve`` gives a binding a view of the handler whose
operation methods are traced, and the binding itself holds no span code. A streaming
operation's span lasts until its stream ends.

Outcome, after OpenTelemetry's HTTP and RPC conventions for server spans: any failure
sets ``error.type`` (the A2A error's JSON-RPC code, or the exception's class); only a
server's fault (an A2A error answered with a 5xx status, or anything that is not an A2A
error) sets the span's status to ``ERROR``. A caller's mistake (an unknown task, bad
params) is recorded, not called a fault.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from parley.telemetry import _names as names
from parley.telemetry._propagation import extract

if TYPE_CHECKING:
    from parley.telemetry._telemetry import Telemetry

H = TypeVar("H")
Operation = Callable[..., Any]


class _Traced:
    """A request handler seen through its traced operations: the operation methods are
    this object's own, everything else is the handler's (read live)."""

    def __init__(self, handler: object, traced: dict[str, Operation]) -> None:
        self.__dict__.update(traced)
        self._handler = handler

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handler, name)


def serve(telemetry: Telemetry, handler: H, transport: str) -> H:
    """``handler`` with each operation traced, for the binding of ``transport``."""
    traced = {
        name: _operation(telemetry, name, getattr(handler, name), transport)
        for name in names.METHODS
        if hasattr(handler, name)
    }
    view: Any = _Traced(handler, traced)
    return view  # type: ignore[no-any-return]


def _operation(telemetry: Telemetry, name: str, method: Operation, transport: str) -> Operation:
    a2a_method = names.METHODS[name]
    streaming = name in names.STREAMING
    following = name == "resubscribe"  # linked to the run it follows
    tracer = telemetry.tracer
    instruments = telemetry.instruments

    async def traced(params: Any = None, call: Any = None) -> Any:
        if call is None:  # a binding's own lookup, not a caller's request
            return await method(params, call)
        attributes = _request_attributes(a2a_method, transport, params, call)
        parent = extract(call.headers)
        links = await telemetry.latest_turn(attributes.get(names.TASK_ID)) if following else None
        span = tracer.start_span(a2a_method, parent, SpanKind.SERVER, attributes, links)
        started = time.perf_counter()
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        try:
            result = await method(params, call)
        except BaseException as error:
            outcome = _failed(span, error)
            _end(span, instruments.request_duration, started, attributes, outcome)
            raise
        finally:
            otel_context.detach(token)
        if streaming:
            return _streamed(telemetry, result, span, started, attributes)
        _describe(span, result)
        _end(span, instruments.request_duration, started, attributes, None)
        return result

    traced.__name__ = name
    return traced


async def _streamed(
    telemetry: Telemetry,
    events: AsyncIterator[tuple[int, Any]],
    span: Span,
    started: float,
    attributes: dict[str, Any],
) -> AsyncIterator[tuple[int, Any]]:
    """``events``, the span ended when they end (or fail, or the reader goes away)."""
    outcome = None
    streams = telemetry.instruments.active_streams
    streams.add(1)
    last = None
    try:
        async for item in events:
            last = item[1]
            yield item
    except BaseException as error:
        outcome = _failed(span, error)
        raise
    finally:
        streams.add(-1)
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
        if last is not None:
            _describe(span, last)
        _end(span, telemetry.instruments.request_duration, started, attributes, outcome)


def _request_attributes(a2a_method: str, transport: str, params: Any, call: Any) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        names.METHOD: a2a_method,
        names.TRANSPORT: transport,
        names.PROTOCOL_VERSION: call.protocol_version,
    }
    if call.tenant:
        attributes[names.TENANT] = call.tenant
    message = getattr(params, "message", None)
    if message is not None:
        attributes[names.MESSAGE_ID] = message.message_id
        if message.task_id:
            attributes[names.TASK_ID] = message.task_id
        if message.context_id:
            attributes[names.CONTEXT_ID] = message.context_id
        if message.reference_task_ids:
            attributes[names.REFERENCE_TASK_IDS] = list(message.reference_task_ids)
        return attributes
    task_id = getattr(params, "id", None) or getattr(params, "task_id", None)
    if isinstance(task_id, str):
        attributes[names.TASK_ID] = task_id
    return attributes


def _describe(span: Span, result: Any) -> None:
    """The task (or reply) an operation answered with, as the span's attributes."""
    if not span.is_recording():
        return
    status = getattr(result, "status", None)
    if status is not None and hasattr(result, "id"):  # a Task
        span.set_attribute(names.TASK_ID, result.id)
        span.set_attribute(names.CONTEXT_ID, result.context_id)
        span.set_attribute(names.TASK_STATE, names.task_state(str(status.state.value)))
        return
    if status is not None and hasattr(result, "task_id"):  # a status update event
        span.set_attribute(names.TASK_STATE, names.task_state(str(status.state.value)))
    task_id, context_id = getattr(result, "task_id", None), getattr(result, "context_id", None)
    if isinstance(task_id, str) and task_id:
        span.set_attribute(names.TASK_ID, task_id)
    if isinstance(context_id, str) and context_id:
        span.set_attribute(names.CONTEXT_ID, context_id)


def _failed(span: Span, error: BaseException) -> str:
    """Record ``error`` on ``span``; the ``error.type`` it was recorded as."""
    code = getattr(error, "code", None)
    if isinstance(code, int) and hasattr(error, "http_status"):  # an A2A error
        outcome = str(code)
        fault = error.http_status >= 500
    elif isinstance(error, asyncio.CancelledError | GeneratorExit):
        outcome, fault = "cancelled", False  # the caller went away
    else:
        outcome, fault = type(error).__qualname__, True
    span.set_attribute(names.ERROR_TYPE, outcome)
    if fault:
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, str(getattr(error, "message", error))))
    return outcome


def _end(
    span: Span, duration: Any, started: float, attributes: dict[str, Any], outcome: str | None
) -> None:
    span.end()
    measured = {
        names.METHOD: attributes[names.METHOD],
        names.TRANSPORT: attributes[names.TRANSPORT],
    }
    version = attributes.get(names.PROTOCOL_VERSION)
    if version is not None:
        measured[names.PROTOCOL_VERSION] = version
    if outcome is not None:
        measured[names.ERROR_TYPE] = outcome
    duration.record(time.perf_counter() - started, measured)
