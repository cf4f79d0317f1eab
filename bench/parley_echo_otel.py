"""parley's echo agent (``bench.parley_echo``) with the OpenTelemetry SDK configured, as
an operator with tracing on has it: every span recorded and handed to a batch processor,
every metric aggregated; the exporter drops what it is given, so no export I/O is in the
measure. Serve with ``parley serve bench.parley_echo_otel:echo --db memory``: importing
this module sets the global providers before the app is made."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from bench.parley_echo import card, echo


class Dropped(SpanExporter):
    """Takes every batch and keeps nothing."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


tracer_provider = TracerProvider()
tracer_provider.add_span_processor(BatchSpanProcessor(Dropped()))
trace.set_tracer_provider(tracer_provider)
metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))

__all__ = ["card", "echo"]
