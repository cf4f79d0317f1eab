"""The trace context across the wire (W3C ``traceparent``, ``tracestate``, ``baggage``,
through the globally configured propagator) and across processes (a ``traceparent``
stored with what outlives the run)."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, SpanContext
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

_TRACEPARENT = TraceContextTextMapPropagator()


def extract(headers: Mapping[str, str]) -> Context:
    """The caller's context from HTTP headers or gRPC metadata (lower-case names)."""
    return propagate.extract(headers)


def inject(headers: MutableMapping[str, str]) -> None:
    """Put the current context on an outgoing call's headers (nothing when no span is
    active and no baggage is set)."""
    propagate.inject(headers)


def traceparent(span: trace.Span | None = None) -> str | None:
    """The W3C ``traceparent`` of ``span`` (the current span when not given), to store;
    ``None`` when there is no valid span."""
    span = span if span is not None else trace.get_current_span()
    if not span.get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    _TRACEPARENT.inject(carrier, trace.set_span_in_context(span))
    return carrier.get("traceparent")


def span_context(stored: str | None) -> SpanContext | None:
    """The span context a stored ``traceparent`` names, or ``None``."""
    if not stored:
        return None
    context = _TRACEPARENT.extract({"traceparent": stored})
    found = trace.get_current_span(context).get_span_context()
    return found if found.is_valid else None


def link(stored: str | None) -> list[Link]:
    """A link to the span a stored ``traceparent`` names (none when it names none)."""
    found = span_context(stored)
    return [] if found is None else [Link(found)]
