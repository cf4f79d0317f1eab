"""The OpenTelemetry SDK recording in memory: what a test's server and client record
(their own providers, never the global ones: the other tests run with telemetry off)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind


@dataclass
class Recording:
    """A tracer provider and a meter provider, and what they recorded."""

    tracer_provider: TracerProvider = field(default_factory=TracerProvider)
    exporter: InMemorySpanExporter = field(default_factory=InMemorySpanExporter)
    reader: InMemoryMetricReader = field(default_factory=InMemoryMetricReader)

    def __post_init__(self) -> None:
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    @property
    def providers(self) -> dict[str, Any]:
        return {"tracer_provider": self.tracer_provider, "meter_provider": self.meter_provider}

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        found = self.exporter.get_finished_spans()
        return [span for span in found if name is None or span.name == name]

    def span(self, name: str, kind: SpanKind | None = None, **attributes: Any) -> ReadableSpan:
        """The one finished span called ``name`` (of ``kind``) with these attributes
        (``a2a_task_id`` for ``a2a.task.id``: underscores for dots)."""
        wanted = {key.replace("_", "."): value for key, value in attributes.items()}
        found = [
            span
            for span in self.spans(name)
            if all((span.attributes or {}).get(key) == value for key, value in wanted.items())
            and (kind is None or span.kind is kind)
        ]
        assert len(found) == 1, (name, wanted, [s.attributes for s in self.spans(name)])
        return found[0]

    async def finished(
        self, name: str, kind: SpanKind | None = None, **attributes: Any
    ) -> ReadableSpan:
        """``span``, once it has ended: a server may end a span a moment after the
        client read the answer (the last event of a stream)."""
        for _ in range(500):
            try:
                return self.span(name, kind, **attributes)
            except AssertionError:
                await asyncio.sleep(0.01)
        return self.span(name, kind, **attributes)

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        span_id = parent.context.span_id
        return [span for span in self.spans() if span.parent and span.parent.span_id == span_id]

    def points(self, metric: str) -> list[Any]:
        """The data points of ``metric`` collected now."""
        data = self.reader.get_metrics_data()
        found: list[Any] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for recorded in scope.metrics:
                    if recorded.name == metric:
                        found.extend(recorded.data.data_points)
        return found

    def tracer(self) -> trace.Tracer:
        return self.tracer_provider.get_tracer("tests")


def recording() -> Iterator[Recording]:
    recorded = Recording()
    try:
        yield recorded
    finally:
        recorded.tracer_provider.shutdown()
        recorded.meter_provider.shutdown()
