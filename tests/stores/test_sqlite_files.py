"""Where a SQLite store keeps its process lock (``<database>.lock``): beside the database
file, also when the database is named by a URI filename, and nowhere for a database
in memory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import StaticPool

from parley.stores.sql import SQLStore
from parley.types import Task, TaskState, TaskStatus


def _task(task_id: str) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=TaskState.completed))


async def test_a_database_in_memory_named_by_uri_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = "sqlite+aiosqlite:///file:tasks?mode=memory&cache=shared&uri=true"
    engine = create_async_engine(url, poolclass=StaticPool)
    store = SQLStore(engine)
    try:
        await store.save(_task("t-1"), 1)
        stored = await store.get("t-1")
        assert stored is not None
        assert stored.task.status.state is TaskState.completed
    finally:
        await store.aclose()
        await engine.dispose()
    assert os.listdir(tmp_path) == []


async def test_a_uri_filename_locks_the_file_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    database = tmp_path / "tasks.db"
    store = SQLStore(f"sqlite+aiosqlite:///file:{database}?uri=true")
    try:
        await store.save(_task("t-1"), 1)
        assert (tmp_path / "tasks.db.lock").read_text() == str(os.getpid())
    finally:
        await store.aclose()
    assert sorted(os.listdir(tmp_path)) == ["tasks.db", "tasks.db.lock"]
