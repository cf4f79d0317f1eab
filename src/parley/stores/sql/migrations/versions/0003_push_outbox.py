"""Push outbox claims: when each entry was written, and who claimed it until when.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("parley_outbox") as outbox:
        outbox.add_column(sa.Column("created", sa.Double, nullable=False, server_default="0"))
        outbox.add_column(sa.Column("holder", sa.String, nullable=True))
        outbox.add_column(sa.Column("leased_until", sa.Double, nullable=False, server_default="0"))
    op.create_index("ix_parley_outbox_lane", "parley_outbox", ["task_id", "config_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_parley_outbox_lane", "parley_outbox")
    with op.batch_alter_table("parley_outbox") as outbox:
        outbox.drop_column("leased_until")
        outbox.drop_column("holder")
        outbox.drop_column("created")
