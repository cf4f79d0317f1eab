"""Indexes for ListTasks: tasks by last activity, overall and per context.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_index("ix_parley_tasks_touched_id", "parley_tasks", ["touched", "id"])
    op.create_index("ix_parley_tasks_context_touched", "parley_tasks", ["context_id", "touched"])


def downgrade() -> None:
    op.drop_index("ix_parley_tasks_context_touched", "parley_tasks")
    op.drop_index("ix_parley_tasks_touched_id", "parley_tasks")
