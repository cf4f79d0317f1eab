"""``parley serve``'s observability: its log format, and OpenTelemetry from the ``OTEL_*``
environment (see docs/observability.md)."""

from __future__ import annotations

import logging
from enum import StrEnum

from parley.telemetry import configure_from_environment, log_handler


class LogFormat(StrEnum):
    text = "text"
    json = "json"


def observe(log_format: LogFormat, log_level: str, console_exporter: bool) -> bool:
    """Set up the process's logs and telemetry before the app is made (the app records
    through the global providers this sets). Returns whether telemetry is on.

    JSON logs: every logger (parley's, uvicorn's) writes one JSON object a line to
    stderr, with ``trace_id`` and ``span_id`` while a span is active. Raises
    ``RuntimeError`` when the environment asks for telemetry and the SDK is missing.
    """
    if log_format is LogFormat.json:
        root = logging.getLogger()
        root.handlers[:] = [log_handler(json_lines=True)]
        root.setLevel(log_level.upper())
    return configure_from_environment(console=console_exporter)


def uvicorn_log_config(log_format: LogFormat) -> dict[str, object] | None:
    """uvicorn's own logging set-up for ``log_format``: its default for text, none for
    JSON (its records then go to the root logger's JSON handler)."""
    if log_format is LogFormat.json:
        return None
    from uvicorn.config import LOGGING_CONFIG

    return LOGGING_CONFIG
