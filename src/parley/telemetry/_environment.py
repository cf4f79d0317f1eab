"""Turning telemetry on without code: the OpenTelemetry SDK configured from the standard
``OTEL_*`` environment variables, as the SDK itself reads them."""

from __future__ import annotations

import os
from typing import Any

_ENDPOINTS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)
_EXPORTERS = ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER")


def configure_from_environment(console: bool = False) -> bool:
    """Configure the global tracer and meter providers from the ``OTEL_*`` environment
    (``OTEL_SERVICE_NAME``, ``OTEL_TRACES_EXPORTER``, ``OTEL_METRICS_EXPORTER``,
    ``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_PROTOCOL``: ``http/protobuf``
    or ``grpc``, ...), with the SDK's own configurator. ``console`` adds the console
    exporters (spans and metrics to stdout), for development.

    Does nothing, and says so with ``False``, unless an exporter is asked for (an
    ``OTEL_*_EXPORTER`` other than ``none``, an OTLP endpoint, or ``console``), or when
    ``OTEL_SDK_DISABLED`` is true. An endpoint with no exporter named means ``otlp``,
    the specification's default. Raises ``RuntimeError`` naming the extra to install
    when the SDK is not installed.
    """
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    asked = {name: os.environ.get(name, "").strip() for name in _EXPORTERS}
    endpoint = any(os.environ.get(name) for name in _ENDPOINTS)
    if not console and not endpoint and all(v in ("", "none") for v in asked.values()):
        return False
    try:
        from opentelemetry.sdk._configuration import _OTelSDKConfigurator
    except ImportError as missing:
        raise RuntimeError(
            "OTEL_* settings ask for telemetry, but the OpenTelemetry SDK is not "
            "installed: pip install 'parley-a2a[telemetry]'"
        ) from missing
    for name, value in asked.items():
        if not value and endpoint:  # the specification's default exporter
            os.environ[name] = "otlp"
    extra = ["console"] if console else []
    # the SDK's environment configuration, as opentelemetry-distro runs it
    configurator: Any = _OTelSDKConfigurator
    configurator().configure(trace_exporter_names=extra, metric_exporter_names=extra)
    return True
