"""The tables, as the store queries them (the migrations in ``migrations/`` create them).

``parley_tasks`` holds one row per task: the snapshot (wire JSON, written at checkpoints
only) and the small columns every event keeps current (state; ``touched``, the latest
status time, ``status_time``), so an event costs one insert and one narrow update, never
a rewrite of the growing snapshot (ListTasks reads through the indexes on ``touched``;
the owner's holds only tasks that have one: a server without authentication writes none).
``parley_events`` is the event log; ``parley_sent_messages`` maps ``(scope, messageId)``
to the task the message went to, for idempotent send.
``parley_push_configs``, ``parley_outbox`` and ``parley_leases`` hold each task's push
configs, the push deliveries still to make, and which process holds the task (a lease
row stays, expired, after release, so the fencing token only ever grows; a task whose
run ended with its first write has none: ``Lease.new``).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Double,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    text,
)

metadata = MetaData()

tasks = Table(
    "parley_tasks",
    metadata,
    Column("id", String, primary_key=True),
    Column("context_id", String, nullable=True),
    Column("state", String(32), nullable=True),
    Column("snapshot", Text, nullable=True),
    Column("snapshot_sequence", Integer, nullable=False, server_default="0"),
    Column("touched", Double, nullable=False),
    Column("owner", String, nullable=True),
    Column("tenant", String, nullable=True),
    Index("ix_parley_tasks_state_touched", "state", "touched"),
    Index("ix_parley_tasks_touched_id", "touched", "id"),
    Index("ix_parley_tasks_context_touched", "context_id", "touched"),
    Index(
        "ix_parley_tasks_owner_touched",
        "owner",
        "touched",
        sqlite_where=text("owner IS NOT NULL"),
        postgresql_where=text("owner IS NOT NULL"),
    ),
)

events = Table(
    "parley_events",
    metadata,
    Column("task_id", String, primary_key=True),
    Column("sequence", Integer, primary_key=True),
    Column("event", Text, nullable=False),
)

sent_messages = Table(
    "parley_sent_messages",
    metadata,
    Column("scope", String, primary_key=True),
    Column("message_id", String, primary_key=True),
    Column("task_id", String, nullable=False),
    Column("reply", Text, nullable=True),
    Column("created", Double, nullable=False),
    Index("ix_parley_sent_messages_task_id", "task_id"),
)

push_configs = Table(
    "parley_push_configs",
    metadata,
    Column("task_id", String, primary_key=True),
    Column("config_id", String, primary_key=True),
    Column("config", Text, nullable=False),
    Column("version", String, nullable=False, server_default="0.3"),
    Column("created", Double, nullable=False),
)

outbox = Table(
    "parley_outbox",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("task_id", String, nullable=False),
    Column("config_id", String, nullable=False),
    Column("sequence", Integer, nullable=False),
    Column("payload", Text, nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("due", Double, nullable=False),
    Column("created", Double, nullable=False, server_default="0"),
    Column("holder", String, nullable=True),
    Column("leased_until", Double, nullable=False, server_default="0"),
    Column("traceparent", String, nullable=True),
    Index("ix_parley_outbox_due", "due"),
    Index("ix_parley_outbox_task_id", "task_id"),
    Index("ix_parley_outbox_lane", "task_id", "config_id", "id"),
)

task_traces = Table(
    "parley_task_traces",
    metadata,
    Column("task_id", String, primary_key=True),
    Column("traceparent", String, nullable=False),
)
"""The W3C ``traceparent`` of each task's latest traced turn, with a store several
processes share: what another process links a resubscribe, a follow-up's turn or a
takeover to."""

leases = Table(
    "parley_leases",
    metadata,
    Column("task_id", String, primary_key=True),
    Column("holder", String, nullable=False),
    Column("token", BigInteger, nullable=False),
    Column("expires", Double, nullable=False),
    Index("ix_parley_leases_holder_expires", "holder", "expires"),
)
