"""Task owners, push configs, the delivery outbox and leases.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("parley_tasks") as tasks:
        tasks.add_column(sa.Column("owner", sa.String, nullable=True))
        tasks.add_column(sa.Column("tenant", sa.String, nullable=True))
    op.create_table(
        "parley_push_configs",
        sa.Column("task_id", sa.String, primary_key=True),
        sa.Column("config_id", sa.String, primary_key=True),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("created", sa.Double, nullable=False),
    )
    op.create_table(
        "parley_outbox",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("task_id", sa.String, nullable=False),
        sa.Column("config_id", sa.String, nullable=False),
        sa.Column("sequence", sa.Integer, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("due", sa.Double, nullable=False),
    )
    op.create_index("ix_parley_outbox_due", "parley_outbox", ["due"])
    op.create_index("ix_parley_outbox_task_id", "parley_outbox", ["task_id"])
    op.create_table(
        "parley_leases",
        sa.Column("task_id", sa.String, primary_key=True),
        sa.Column("holder", sa.String, nullable=False),
        sa.Column("token", sa.BigInteger, nullable=False),
        sa.Column("expires", sa.Double, nullable=False),
    )
    op.create_index("ix_parley_leases_holder", "parley_leases", ["holder"])


def downgrade() -> None:
    op.drop_table("parley_leases")
    op.drop_table("parley_outbox")
    op.drop_table("parley_push_configs")
    with op.batch_alter_table("parley_tasks") as tasks:
        tasks.drop_column("tenant")
        tasks.drop_column("owner")
