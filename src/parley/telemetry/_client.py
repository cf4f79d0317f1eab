"""Client spans: one ``CLIENT`` span per call parley's client makes, named after the A2A
method, whose context the call carries (``traceparent``) to the agent."""

from __future__ import annotations

import time
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from parley.telemetry import _names as names

if TYPE_CHECKING:
    from parley.telemetry._telemetry import Telemetry


class TracedCall:
    """The span of one call, from its start until ``end``."""

    __slots__ = ("_attributes", "_duration", "_outcome", "_started", "span")

    def __init__(self, telemetry: Telemetry, operation: str, params: Any) -> None:
        method = names.METHODS.get(operation, operation)
        attributes: dict[str, Any] = {names.METHOD: method}
        message = getattr(params, "message", None)
        if message is not None:
            attributes[names.MESSAGE_ID] = message.message_id
            if message.task_id:
                attributes[names.TASK_ID] = message.task_id
            if message.context_id:
                attributes[names.CONTEXT_ID] = message.context_id
        else:
            task_id = getattr(params, "id", None) or getattr(params, "task_id", None)
            if isinstance(task_id, str):
                attributes[names.TASK_ID] = task_id
        self._attributes = {names.METHOD: method}
        self.span = telemetry.tracer.start_span(method, kind=SpanKind.CLIENT, attributes=attributes)
        self._duration = telemetry.instruments.client_duration
        self._outcome: str | None = None
        self._started = time.perf_counter()

    def inject(self, headers: MutableMapping[str, str]) -> None:
        """Carry this span's context (and the current baggage) on the call."""
        propagate.inject(headers, trace.set_span_in_context(self.span))

    def answered(self, result: Any) -> None:
        """The call's result (or a stream's event): the task it names, its state."""
        status = getattr(result, "status", None)
        if status is not None:
            state = names.task_state(str(status.state.value))
            self.span.set_attribute(names.TASK_STATE, state)
        task_id = (
            getattr(result, "id", None)
            if status is not None and hasattr(result, "history")
            else getattr(result, "task_id", None)
        )
        if isinstance(task_id, str) and task_id:
            self.span.set_attribute(names.TASK_ID, task_id)

    def failed(self, error: BaseException) -> None:
        """The call failed: ``error.type`` (the A2A error's code) and status ``ERROR``
        (seen from the client, any failure of the call is one)."""
        code = getattr(error, "code", None)
        self._outcome = str(code) if isinstance(code, int) else type(error).__qualname__
        self.span.set_attribute(names.ERROR_TYPE, self._outcome)
        self.span.set_status(Status(StatusCode.ERROR, str(getattr(error, "message", error))))

    def end(self) -> None:
        self.span.end()
        measured = dict(self._attributes)
        if self._outcome is not None:
            measured[names.ERROR_TYPE] = self._outcome
        self._duration.record(time.perf_counter() - self._started, measured)
