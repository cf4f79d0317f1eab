"""The metric instruments parley records (made once, from one meter)."""

from __future__ import annotations

from opentelemetry.metrics import Meter

from parley.telemetry import _names as names

_DURATION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
"""Seconds: a send served from memory takes well under a millisecond, an agent's run
may take many seconds."""


class Instruments:
    """Every instrument, by what it counts."""

    def __init__(self, meter: Meter) -> None:
        self.request_duration = meter.create_histogram(
            names.REQUEST_DURATION,
            unit="s",
            description="A2A requests served, by method, transport, version and outcome",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.client_duration = meter.create_histogram(
            names.CLIENT_DURATION,
            unit="s",
            description="A2A calls made by parley's client, by method, transport and outcome",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.state_transitions = meter.create_counter(
            names.STATE_TRANSITIONS,
            unit="{transition}",
            description="Task status updates stored, by the state they move the task to",
        )
        self.active_runs = meter.create_up_down_counter(
            names.ACTIVE_RUNS, unit="{run}", description="Agent runs in progress"
        )
        self.active_streams = meter.create_up_down_counter(
            names.ACTIVE_STREAMS, unit="{stream}", description="Open event streams"
        )
        self.push_backlog = meter.create_up_down_counter(
            names.PUSH_BACKLOG,
            unit="{notification}",
            description="Push notifications written to the outbox and not yet settled",
        )
        self.push_deliveries = meter.create_counter(
            names.PUSH_DELIVERIES,
            unit="{attempt}",
            description="Push delivery attempts, by outcome (delivered, retry, failed)",
        )
        self.store_write_duration = meter.create_histogram(
            names.STORE_WRITE_DURATION,
            unit="s",
            description="Store writes of events (one transaction, possibly a batch of sends)",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.store_write_batch = meter.create_histogram(
            names.STORE_WRITE_BATCH,
            unit="{write}",
            description="The task writes one store transaction carries",
            explicit_bucket_boundaries_advisory=(1, 2, 4, 8, 16, 32, 64, 128),
        )
        self.lease_takeovers = meter.create_counter(
            names.LEASE_TAKEOVERS,
            unit="{takeover}",
            description="Tasks this process took over from a process whose lease lapsed",
        )
