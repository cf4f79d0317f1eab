"""The leases of one holder by expiry: the heartbeat renews the live ones only.

A released lease keeps its row (expired, so the fencing token only grows), and its
holder. Indexed by holder alone, a process's heartbeat (``renew_leases``: holder and
not yet expired) read every lease the process ever held, a million after a million
tasks; by (holder, expires) it reads the live ones.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_index("ix_parley_leases_holder_expires", "parley_leases", ["holder", "expires"])
    op.drop_index("ix_parley_leases_holder", "parley_leases")


def downgrade() -> None:
    op.create_index("ix_parley_leases_holder", "parley_leases", ["holder"])
    op.drop_index("ix_parley_leases_holder_expires", "parley_leases")
