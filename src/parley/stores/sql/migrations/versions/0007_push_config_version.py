"""The A2A version each push config was set in (the shape its notifications take).

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # every config stored before this was set through v0.3 (or 2025-early, which its id says)
    op.add_column(
        "parley_push_configs",
        sa.Column("version", sa.String(), nullable=False, server_default="0.3"),
    )


def downgrade() -> None:
    with op.batch_alter_table("parley_push_configs") as batch:
        batch.drop_column("version")
