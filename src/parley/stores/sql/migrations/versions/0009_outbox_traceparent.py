"""The trace of the run that produced each push notification (its ``traceparent``).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # entries written before this were not traced
    op.add_column("parley_outbox", sa.Column("traceparent", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("parley_outbox") as batch:
        batch.drop_column("traceparent")
