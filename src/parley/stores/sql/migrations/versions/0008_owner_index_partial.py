"""The owner index holds only the tasks that have an owner.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None

_OWNED = sa.text("owner IS NOT NULL")


def upgrade() -> None:
    # A server without authentication stores its tasks with no owner: none of them needs
    # an entry (one B-tree less written a send). ``owner = ?`` implies the condition, so
    # ListTasks of a principal still reads through the index.
    op.drop_index("ix_parley_tasks_owner_touched", "parley_tasks")
    op.create_index(
        "ix_parley_tasks_owner_touched",
        "parley_tasks",
        ["owner", "touched"],
        sqlite_where=_OWNED,
        postgresql_where=_OWNED,
    )


def downgrade() -> None:
    op.drop_index("ix_parley_tasks_owner_touched", "parley_tasks")
    op.create_index("ix_parley_tasks_owner_touched", "parley_tasks", ["owner", "touched"])
