"""Tasks, their event logs and sent message ids.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "parley_tasks",
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("context_id", sa.String, nullable=True),
        sa.Column("state", sa.String(32), nullable=True),
        sa.Column("snapshot", sa.Text, nullable=True),
        sa.Column("snapshot_sequence", sa.Integer, nullable=False, server_default="0"),
        sa.Column("touched", sa.Double, nullable=False),
    )
    op.create_index("ix_parley_tasks_state_touched", "parley_tasks", ["state", "touched"])
    op.create_table(
        "parley_events",
        sa.Column("task_id", sa.String, primary_key=True),
        sa.Column("sequence", sa.Integer, primary_key=True),
        sa.Column("event", sa.Text, nullable=False),
    )
    op.create_table(
        "parley_sent_messages",
        sa.Column("scope", sa.String, primary_key=True),
        sa.Column("message_id", sa.String, primary_key=True),
        sa.Column("task_id", sa.String, nullable=False),
        sa.Column("reply", sa.Text, nullable=True),
        sa.Column("created", sa.Double, nullable=False),
    )
    op.create_index("ix_parley_sent_messages_task_id", "parley_sent_messages", ["task_id"])


def downgrade() -> None:
    op.drop_table("parley_sent_messages")
    op.drop_table("parley_events")
    op.drop_table("parley_tasks")
