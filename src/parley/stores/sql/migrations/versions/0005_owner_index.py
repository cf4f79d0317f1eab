"""An index for the tasks of one owner by last activity (ListTasks of a principal).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_index("ix_parley_tasks_owner_touched", "parley_tasks", ["owner", "touched"])


def downgrade() -> None:
    op.drop_index("ix_parley_tasks_owner_touched", "parley_tasks")
