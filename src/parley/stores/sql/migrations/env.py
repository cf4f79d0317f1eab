"""Alembic environment: runs on the connection ``parley.stores.sql.upgrade`` hands it."""

from __future__ import annotations

from alembic import context

from parley.stores.sql._schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError(
        "parley's migrations run through `parley db upgrade --db URL` or "
        "parley.stores.sql.upgrade(), not the alembic command"
    )
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
