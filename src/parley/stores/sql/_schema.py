"""The tables, as the store queries them (the migrations in ``migrations/`` create them).

``parley_tasks`` holds one row per task: the snapshot (wire JSON, written at checkpoints
only) and the small columns every event keeps current (state, time of last activity),
so an event costs one insert and one narrow update, never a rewrite of the growing
snapshot. ``parley_events`` is the event log; ``parley_sent_messages`` maps
``(scope, messageId)`` to the task the message went to, for idempotent send.
"""

from __future__ import annotations

from sqlalchemy import Column, Double, Index, Integer, MetaData, String, Table, Text

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
    Index("ix_parley_tasks_state_touched", "state", "touched"),
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
