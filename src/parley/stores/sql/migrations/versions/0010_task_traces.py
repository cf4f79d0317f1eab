"""Each task's latest traced turn, for the processes that share the store.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "parley_task_traces",
        sa.Column("task_id", sa.String(), primary_key=True),
        sa.Column("traceparent", sa.String(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("parley_task_traces")
