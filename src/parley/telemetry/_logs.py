"""Log records that say which trace they belong to, and a JSON form for log pipelines."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

try:
    from opentelemetry import trace
except ImportError:  # pragma: no cover - the telemetry extra is not installed
    trace = None  # type: ignore[assignment]

_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class TraceContextFilter(logging.Filter):
    """Adds ``trace_id`` and ``span_id`` (lower-case hex, as W3C writes them) to each
    record logged while a span is active; records logged outside any span get neither.

    Attach it to a handler: ``handler.addFilter(TraceContextFilter())``.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if trace is None:
            return True
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            record.trace_id = format(context.trace_id, "032x")
            record.span_id = format(context.span_id, "016x")
        return True


class JSONFormatter(logging.Formatter):
    """One JSON object per line: ``time`` (UTC, ISO 8601), ``level``, ``logger``,
    ``message``, ``trace_id``/``span_id`` when the record has them (``TraceContextFilter``),
    ``exception`` when there is one, and whatever ``extra`` the call gave."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def log_handler(json_lines: bool = False) -> logging.Handler:
    """A stderr handler whose records carry the trace context: in JSON lines, or as
    text with ``trace_id``/``span_id`` appended when a span is active."""
    handler = logging.StreamHandler()
    handler.addFilter(TraceContextFilter())
    handler.setFormatter(JSONFormatter() if json_lines else _TextFormatter())
    return handler


class _TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(levelname)s:%(name)s:%(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        trace_id = getattr(record, "trace_id", None)
        if trace_id is None:
            return text
        return f"{text} trace_id={trace_id} span_id={getattr(record, 'span_id', '')}"
