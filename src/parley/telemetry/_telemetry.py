"""``Telemetry``: parley's tracer and instruments from one tracer provider and one meter
provider, and the spans each part of parley records through it.

Whoever holds a ``Telemetry`` records; whoever holds ``None`` (no SDK configured, or
the ``telemetry`` extra not installed: see ``open_telemetry``) records nothing and
does nothing more than that ``None`` check.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import (
    Link,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TracerProvider,
)

from parley.telemetry import _names as names
from parley.telemetry import _server
from parley.telemetry._client import TracedCall
from parley.telemetry._metrics import Instruments
from parley.telemetry._propagation import link, span_context, traceparent

logger = logging.getLogger("parley.telemetry")

H = TypeVar("H")
T = TypeVar("T")

SCOPE = "parley"
"""The instrumentation scope of everything parley records."""
_REMEMBERED_TASKS = 10_000
"""Tasks whose latest turn this process remembers, to link a next turn to it."""


def _version() -> str | None:
    try:
        return version("parley-a2a")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return None


class TurnRecord:
    """A turn being run: its span, current while the agent's code runs (``end`` it in
    the same task that began it), and how many of its events it recorded."""

    __slots__ = ("_telemetry", "_tokens", "dropped", "recorded", "span", "task_id")

    def __init__(self, telemetry: Telemetry, span: Span, task_id: str) -> None:
        self.span = span
        self.task_id = task_id
        self.recorded = 0
        self.dropped = 0
        self._telemetry = telemetry
        self._tokens = (
            otel_context.attach(trace.set_span_in_context(span)),
            _TURN.set(self),
        )

    def end(self) -> None:
        context_token, turn_token = self._tokens
        _TURN.reset(turn_token)
        otel_context.detach(context_token)
        self._telemetry.instruments.active_runs.add(-1)
        if self.dropped:
            self.span.set_attribute(names.EVENTS_DROPPED, self.dropped)
        self.span.end()


_TURN: ContextVar[TurnRecord | None] = ContextVar("parley_turn", default=None)


class PushAttempt:
    """One delivery attempt being made: the trace headers the notification carries,
    and what came of it."""

    __slots__ = ("_instruments", "headers", "span")

    def __init__(self, telemetry: Telemetry, span: Span) -> None:
        self.span = span
        self._instruments = telemetry.instruments
        self.headers: dict[str, str] = {}
        propagate.inject(self.headers, trace.set_span_in_context(span))

    def ended(self, delivered: bool, settled: bool, status: int | None) -> None:
        """The attempt came to this: ``delivered``, or not (and then ``settled``: given
        up on; otherwise put off for another attempt); ``status``, the webhook's."""
        outcome = "delivered" if delivered else ("failed" if settled else "retry")
        span = self.span
        span.set_attribute(names.PUSH_OUTCOME, outcome)
        if status is not None:
            span.set_attribute(names.HTTP_STATUS, status)
        if not delivered:
            span.set_status(Status(StatusCode.ERROR, outcome))
        self._instruments.push_deliveries.add(1, {names.PUSH_OUTCOME: outcome})
        if settled:
            self._instruments.push_backlog.add(-1)


class Telemetry:
    """What parley records, and where: spans through ``tracer_provider``, metrics
    through ``meter_provider``."""

    def __init__(
        self,
        tracer_provider: TracerProvider,
        meter_provider: MeterProvider,
        *,
        agent_name: str | None = None,
    ) -> None:
        release = _version()
        self.tracer = tracer_provider.get_tracer(SCOPE, release)
        self.instruments = Instruments(meter_provider.get_meter(SCOPE, release))
        self.agent_name = agent_name
        self._turn_name = f"{names.TURN} {agent_name}" if agent_name else names.TURN
        self.traces: Any = None
        """A store several processes share, keeping each task's latest turn
        (``save_trace``, ``trace_of``): set by the request handler."""
        self._turns: OrderedDict[str, str] = OrderedDict()
        """Task id -> the ``traceparent`` of its latest turn here (the oldest forgotten)."""

    # -- server ----------------------------------------------------------------------

    def serve(self, handler: H, transport: str) -> H:
        """``handler`` as a binding of ``transport`` (``JSONRPC``, ``HTTP+JSON``,
        ``GRPC``) should call it: each operation in a ``SERVER`` span (see ``_server``)."""
        return _server.serve(self, handler, transport)

    # -- agent runs ------------------------------------------------------------------

    async def begin_turn(self, task_id: str, context_id: str) -> TurnRecord:
        """A turn of the agent's run on ``task_id`` begins, the agent's code to run in its
        span (call it from the run's own task): a child of the operation that started
        it, linked to the task's previous turn (run here, or kept in ``traces``)."""
        earlier = await self.previous_turn(task_id)
        attributes = {
            names.OPERATION_NAME: names.TURN,
            names.TASK_ID: task_id,
            names.CONTEXT_ID: context_id,
        }
        if self.agent_name:
            attributes[names.AGENT_NAME] = self.agent_name
        span = self.tracer.start_span(
            self._turn_name, kind=SpanKind.INTERNAL, attributes=attributes, links=link(earlier)
        )
        try:
            await self.remember(task_id, span)  # what a resubscriber or the next turn links to
        except BaseException:
            span.end()
            raise
        self.instruments.active_runs.add(1)
        return TurnRecord(self, span, task_id)

    async def remember(self, task_id: str, span: Span) -> None:
        """``span`` is the task's latest turn: kept here, and in ``traces`` when set."""
        stored = traceparent(span)
        if stored is None:
            return
        turns = self._turns
        turns[task_id] = stored
        turns.move_to_end(task_id)
        if len(turns) > _REMEMBERED_TASKS:
            turns.popitem(last=False)
        if self.traces is not None:
            try:
                await self.traces.save_trace(task_id, stored)
            except Exception:  # the trace is lost, never the run
                logger.warning("could not keep the trace of task %s", task_id, exc_info=True)

    async def previous_turn(self, task_id: str | None) -> str | None:
        """The ``traceparent`` of the task's latest turn: run here, or kept in ``traces``
        by another process."""
        if task_id is None:
            return None
        known = self._turns.get(task_id)
        if known is not None or self.traces is None:
            return known
        try:
            found: str | None = await self.traces.trace_of(task_id)
        except Exception:
            logger.warning("could not read the trace of task %s", task_id, exc_info=True)
            return None
        return found

    async def latest_turn(self, task_id: str | None) -> list[Link]:
        """A link to the task's latest turn, running or not (none when none is known)."""
        return link(await self.previous_turn(task_id))

    def run_traceparent(self, task_id: str) -> str | None:
        """The ``traceparent`` of the run producing events now (the current turn's), or
        of the task's latest turn here: what a push notification carries."""
        record = _TURN.get()
        if record is not None:
            return traceparent(record.span)
        current = traceparent()
        return current if current is not None else self._turns.get(task_id)

    def stored(self, events: Sequence[Any], notifications: int) -> None:
        """Events of a task were stored (``StoredEvent``s), with ``notifications`` push
        notifications to deliver: span events on the current turn (at most
        ``MAX_TURN_EVENTS`` a turn), state transitions counted."""
        if notifications:
            self.instruments.push_backlog.add(notifications)
        record = _TURN.get()
        for stored in events:
            self._event(record, stored.event, stored.sequence)

    def _event(self, record: TurnRecord | None, event: Any, sequence: int) -> None:
        status = getattr(event, "status", None)
        attributes: dict[str, Any] = {names.EVENT_SEQUENCE: sequence}
        if status is not None:
            state = names.task_state(str(status.state.value))
            attributes[names.TASK_STATE] = state
            self.instruments.state_transitions.add(1, {names.TASK_STATE: state})
            name = "a2a.task" if hasattr(event, "history") else "a2a.task.status_update"
        elif hasattr(event, "artifact"):
            attributes[names.ARTIFACT_ID] = event.artifact.artifact_id
            name = "a2a.task.artifact_update"
        else:
            attributes[names.MESSAGE_ID] = getattr(event, "message_id", "")
            name = "a2a.message"
        if record is None:
            return
        if status is not None and status.state.value == "failed":
            record.span.set_status(Status(StatusCode.ERROR, "the task failed"))
        if record.recorded >= names.MAX_TURN_EVENTS:
            record.dropped += 1
            return
        record.recorded += 1
        record.span.add_event(name, attributes)

    # -- push ------------------------------------------------------------------------

    @contextmanager
    def push_attempt(self, entry: Any, url: str) -> Iterator[PushAttempt]:
        """One delivery attempt of a push notification (an outbox entry): a ``CLIENT``
        span in the trace of the run that produced it (the entry's ``traceparent``),
        whose context the notification carries (``PushAttempt.headers``)."""
        parent = span_context(entry.traceparent)
        context = None
        if parent is not None:
            context = trace.set_span_in_context(trace.NonRecordingSpan(parent))
        attributes: dict[str, str | int] = {
            names.TASK_ID: entry.task_id,
            names.PUSH_CONFIG_ID: entry.config_id,
            names.PUSH_ATTEMPT: entry.attempts + 1,
            names.EVENT_SEQUENCE: entry.sequence,
            names.URL_FULL: url,
        }
        span = self.tracer.start_span(names.PUSH_DELIVERY, context, SpanKind.CLIENT, attributes)
        with trace.use_span(span, end_on_exit=True):
            yield PushAttempt(self, span)

    # -- stores and leases -------------------------------------------------------------

    async def store_write(self, write: Awaitable[T], events: Sequence[Any]) -> T:
        """``write``, the store write of ``events`` (one task's, in one transaction), in
        a span of its own (a child of the turn), its duration measured. A store that
        commits the writes of many tasks together records the batch too
        (``store_batch``)."""
        attributes = {names.STORE_EVENTS: len(events)}
        span = self.tracer.start_span(names.STORE_WRITE, attributes=attributes)
        started = time.perf_counter()
        try:
            with trace.use_span(span, end_on_exit=True):
                return await write
        finally:
            self.instruments.store_write_duration.record(time.perf_counter() - started)

    def origin(self) -> SpanContext | None:
        """The current span's context, for a batch to link to (``store_batch``)."""
        found = trace.get_current_span().get_span_context()
        return found if found.is_valid else None

    @contextmanager
    def store_batch(self, origins: Sequence[SpanContext | None]) -> Iterator[None]:
        """One commit of a store that writes the writes of many tasks together (group
        commit): a span of its own (in no request's trace: it serves several) linked to
        the spans of the writes it carries (``origins``, from ``origin``)."""
        links = [Link(found) for found in origins if found is not None]
        attributes = {names.STORE_BATCH_SIZE: len(origins)}
        span = self.tracer.start_span(
            names.STORE_COMMIT, otel_context.Context(), attributes=attributes, links=links
        )
        self.instruments.store_write_batch.record(len(origins))
        with trace.use_span(span, end_on_exit=True):
            yield

    async def lease_takeover(self, task_id: str) -> None:
        """This process took ``task_id`` over from one whose lease lapsed: a span linked
        to the task's last turn there, and the takeover counted."""
        attributes = {names.TASK_ID: task_id}
        links = await self.latest_turn(task_id)
        span = self.tracer.start_span(
            names.LEASE_TAKEOVER, kind=SpanKind.INTERNAL, attributes=attributes, links=links
        )
        span.end()
        self.instruments.lease_takeovers.add(1)

    # -- client ----------------------------------------------------------------------

    def client_call(self, operation: str, params: Any) -> TracedCall:
        """The ``CLIENT`` span of one call of parley's client, started now."""
        return TracedCall(self, operation, params)
