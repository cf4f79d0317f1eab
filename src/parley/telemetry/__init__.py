"""Observability: OpenTelemetry spans, metrics and log correlation for parley.

Sits below ``stores``, ``server``, ``client`` and ``cli``, and imports only
``opentelemetry-api`` (the ``telemetry`` extra) and the standard library; the SDK is
loaded only by ``configure_from_environment``. Everything records through the providers
it is given, or the global ones; ``open_telemetry`` answers ``None`` when there is
nothing to record to (no SDK configured, or the extra not installed), and the parts of
parley that hold ``None`` do nothing but check it. See docs/observability.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parley.telemetry._environment import configure_from_environment
from parley.telemetry._logs import JSONFormatter, TraceContextFilter, log_handler

if TYPE_CHECKING:
    from collections.abc import Callable, MutableMapping

    from parley.telemetry._client import TracedCall
    from parley.telemetry._telemetry import Telemetry, TurnRecord

__all__ = [
    "JSONFormatter",
    "Telemetry",
    "TraceContextFilter",
    "TracedCall",
    "TurnRecord",
    "configure_from_environment",
    "context_injector",
    "log_handler",
    "open_telemetry",
]


def open_telemetry(
    tracer_provider: Any = None, meter_provider: Any = None, *, agent_name: str | None = None
) -> Telemetry | None:
    """Parley's telemetry through these providers (the global ones where not given), or
    ``None`` when neither records anything: no provider given and none set globally, or
    OpenTelemetry not installed. Set the global providers before the app is made."""
    try:
        from opentelemetry import metrics, trace
    except ImportError:
        if tracer_provider is not None or meter_provider is not None:
            raise RuntimeError(
                "providers were given, but opentelemetry-api is not installed: "
                "pip install 'parley-a2a[telemetry]'"
            ) from None
        return None
    from parley.telemetry._telemetry import Telemetry

    tracing = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
    metering = meter_provider if meter_provider is not None else metrics.get_meter_provider()
    if not (_records(tracing) or _records(metering)):
        return None
    return Telemetry(tracing, metering, agent_name=agent_name)


def _records(provider: object) -> bool:
    """Whether ``provider`` is an implementation (not the API's no-op, nor its proxy
    waiting for a global provider that was never set)."""
    kind = type(provider).__name__
    return kind not in {
        "ProxyTracerProvider",
        "NoOpTracerProvider",
        "_ProxyMeterProvider",
        "NoOpMeterProvider",
    }


def context_injector() -> Callable[[MutableMapping[str, str]], None] | None:
    """What puts the current trace context on an outgoing call's headers
    (``traceparent``, ``tracestate``, ``baggage``), or ``None`` when OpenTelemetry is
    not installed."""
    try:
        from parley.telemetry._propagation import inject
    except ImportError:
        return None
    return inject


def __getattr__(name: str) -> Any:
    if name == "Telemetry":
        from parley.telemetry._telemetry import Telemetry

        return Telemetry
    if name == "TurnRecord":
        from parley.telemetry._telemetry import TurnRecord

        return TurnRecord
    if name == "TracedCall":
        from parley.telemetry._client import TracedCall

        return TracedCall
    raise AttributeError(name)
