"""``parley db status`` shows what an upgrade would apply; ``parley db upgrade`` applies it
and says what it applied (docs/storage.md, "Upgrading parley")."""

from __future__ import annotations

from pathlib import Path

from parley.stores.sql._migrations import head
from tests.cli.conftest import parley


def test_status_lists_the_migrations_an_upgrade_applies_then_none(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'tasks.db'}"
    before = parley("db", "status", "--db", db)
    assert before.returncode == 0, before.stderr
    assert "schema revision none (no tables yet)" in before.stderr
    assert "0001  " in before.stderr
    assert f"{head()}  " in before.stderr

    upgraded = parley("db", "upgrade", "--db", db)
    assert upgraded.returncode == 0, upgraded.stderr
    assert "applying 0001  " in upgraded.stderr
    assert f"task database at schema revision {head()}" in upgraded.stderr

    after = parley("db", "status", "--db", db)
    assert after.returncode == 0, after.stderr
    assert f"schema revision {head()}" in after.stderr
    assert "up to date" in after.stderr
    assert "applying" not in parley("db", "upgrade", "--db", db).stderr


def test_status_of_the_memory_store_says_it_has_no_schema() -> None:
    shown = parley("db", "status", "--db", "memory")
    assert shown.returncode == 0
    assert "no schema" in shown.stderr
