"""SQLite group commit: many tasks' writes in one transaction, each caller answered on
its own, and an acknowledged event kept when the process dies (kill -9) right after.

The durability tests run ``parley serve`` as a separate process on a real SQLite file,
kill it with SIGKILL once the client has its answer, start a new one on the same file
and read the task back (spec 6.1: a task's state and artifacts are what the server
reports for it; parley's promise is that what it acknowledged is stored).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.stores import StoredEvent, TaskSnapshot
from parley.stores._protocols import TaskQuery
from parley.stores._replay import replay
from parley.stores.sql import SQLStore
from parley.stores.sql._schema import sent_messages
from parley.stores.sql._writer import _CHECKPOINT_EVERY, SQLiteWriter, _can_hurry, _hurry
from parley.types import (
    Artifact,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from tests.servers import parley_serve
from tests.stores.databases import sqlite_url

TASKS = 60


def _task(task_id: str) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=TaskState.working))


def _chunk(task_id: str, text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id="c",
        artifact=Artifact(artifact_id="a", parts=[TextPart(text=text)]),
    )


async def test_concurrent_appends_share_transactions_and_fail_alone(tmp_path: Path) -> None:
    """Appends of many tasks at once all land; the one that repeats a sequence number
    fails with ValueError and stores nothing, and sinks no other task's write."""
    store = SQLStore(sqlite_url(tmp_path))
    try:
        ids = [f"t{number}" for number in range(TASKS)]
        await asyncio.gather(*(store.append(t, [StoredEvent(1, _task(t))]) for t in ids))
        writes = [store.append(t, [StoredEvent(2, _chunk(t, f"chunk of {t}"))]) for t in ids]
        writes.append(store.append("t7", [StoredEvent(1, _chunk("t7", "repeated"))]))
        results = await asyncio.gather(*writes, return_exceptions=True)
        assert all(result is None for result in results[:-1])
        assert isinstance(results[-1], ValueError)
        for task_id in ids:
            logged = await store.events(task_id)
            assert [stored.sequence for stored in logged] == [1, 2]
            snapshot = await store.get(task_id)
            assert snapshot is not None
            artifacts = snapshot.task.artifacts or []
            assert [p.text for p in artifacts[0].parts] == [f"chunk of {task_id}"]  # type: ignore[union-attr]
    finally:
        await store.aclose()


async def test_events_without_a_status_leave_the_task_row_alone(tmp_path: Path) -> None:
    """A task's first events make its row; later events without a status (a stream's
    chunks, each its own append when the agent waits between them) do not write it
    again, while a status moves it (a trigger counts the row's updates)."""
    store = SQLStore(sqlite_url(tmp_path))
    stack = contextlib.ExitStack()  # the counting connection is closed on every path
    try:
        await store.append("t", [StoredEvent(1, _task("t"))])
        counter = stack.enter_context(contextlib.closing(sqlite3.connect(tmp_path / "tasks.db")))
        with counter:
            counter.execute("CREATE TABLE updates (n INTEGER)")
            counter.execute("INSERT INTO updates VALUES (0)")
            counter.execute(
                "CREATE TRIGGER count_updates AFTER UPDATE ON parley_tasks "
                "BEGIN UPDATE updates SET n = n + 1; END"
            )

        def updates() -> int:
            return int(counter.execute("SELECT n FROM updates").fetchone()[0])

        await store.append("t", [StoredEvent(2, _chunk("t", "a"))])
        await store.append(
            "t", [StoredEvent(3, _chunk("t", "b")), StoredEvent(4, _chunk("t", "c"))]
        )
        assert updates() == 0
        done = TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus(state=TaskState.completed), final=True
        )
        await store.append("t", [StoredEvent(5, done)])
        assert updates() == 1
        snapshot = await store.get("t")
        assert snapshot is not None
        assert snapshot.task.status.state is TaskState.completed
        assert [stored.sequence for stored in await store.events("t")] == [1, 2, 3, 4, 5]
    finally:
        stack.close()
        await store.aclose()


async def test_a_first_write_stores_no_snapshot_and_reads_back_whole(tmp_path: Path) -> None:
    """An append that starts a task's log (sequence 1) with the snapshot its events fold
    to writes the row without it (the snapshot is those events' replay); the task reads
    back the same, by ``get`` and ``list_tasks``, and a later append's snapshot is
    stored as before."""
    store = SQLStore(sqlite_url(tmp_path))
    try:
        done = TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus(state=TaskState.completed), final=True
        )
        first = [StoredEvent(1, _task("t")), StoredEvent(2, _chunk("t", "a")), StoredEvent(3, done)]
        folded = replay(None, 0, first)
        assert folded is not None
        await store.append("t", first, snapshot=folded.task, owner="ann")

        def row() -> tuple[Any, ...]:
            with contextlib.closing(sqlite3.connect(tmp_path / "tasks.db")) as reader:
                query = "SELECT snapshot, snapshot_sequence, state, owner FROM parley_tasks"
                return tuple(reader.execute(query).fetchone())

        assert row() == (None, 0, "completed", "ann")
        snapshot = await store.get("t")
        assert snapshot == TaskSnapshot(folded.task, 3, "ann")
        assert (await store.list_tasks(TaskQuery(owner="ann"))).tasks == [folded.task]

        later = TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus(state=TaskState.working)
        )
        moved = replay(folded.task, 3, [StoredEvent(4, later)])
        assert moved is not None
        await store.append("t", [StoredEvent(4, later)], snapshot=moved.task, owner="ann")
        assert row() == (moved.task.to_json().decode(), 4, "working", "ann")
        assert await store.get("t") == TaskSnapshot(moved.task, 4, "ann")
    finally:
        await store.aclose()


async def test_saves_and_appends_interleave_in_order(tmp_path: Path) -> None:
    """A task's own writes keep their order when other tasks' writes share the batch."""
    store = SQLStore(sqlite_url(tmp_path))
    try:

        async def one(task_id: str) -> None:
            await store.append(task_id, [StoredEvent(1, _task(task_id))])
            await store.append(task_id, [StoredEvent(2, _chunk(task_id, "x"))])
            done = _task(task_id)
            done.status = TaskStatus(state=TaskState.completed)
            await store.save(done, 2)

        await asyncio.gather(*(one(f"s{n}") for n in range(TASKS)))
        for number in range(TASKS):
            snapshot = await store.get(f"s{number}")
            assert snapshot is not None
            assert snapshot.sequence == 2
            assert snapshot.task.status.state is TaskState.completed
    finally:
        await store.aclose()


async def test_writes_queued_in_the_turns_after_the_first_share_its_commit(
    tmp_path: Path,
) -> None:
    """A request's write is queued a few turns of the event loop after its bytes are
    read, so the flush waits three turns from the first write (``_writer._TURNS``):
    writes queued in the first write's turn and the two after go in the same commit,
    and a write queued after it in a commit of its own."""
    writer = SQLiteWriter(str(tmp_path / "turns.db"))
    statements: list[str] = []
    try:
        await writer.submit(lambda connection: connection.execute("CREATE TABLE t (turn)"))
        await writer.submit(lambda connection: connection.set_trace_callback(statements.append))

        async def insert(turn: int) -> None:
            for _ in range(turn):
                await asyncio.sleep(0)  # one turn of the loop
            await writer.submit(
                lambda connection: connection.execute("INSERT INTO t VALUES (?)", (turn,))
            )

        statements.clear()
        await asyncio.gather(*(insert(turn) for turn in range(3)))
        assert statements.count("COMMIT") == 1
        await insert(0)
        assert statements.count("COMMIT") == 2
        count = await writer.submit(
            lambda connection: connection.execute("SELECT count(*) FROM t").fetchone()[0]
        )
        assert count == 4
    finally:
        await writer.aclose()


async def test_appends_wait_for_a_pooled_transaction_that_holds_the_write_lock(
    tmp_path: Path,
) -> None:
    """A pooled SQLAlchemy transaction holds SQLite's write lock across awaits of the same
    event loop the writer commits on: the writer tries again later instead of waiting for
    the lock there (which would stop the loop, and so the transaction, for good), and
    every append lands once the transaction commits."""
    store = SQLStore(sqlite_url(tmp_path))
    try:
        await store.append("first", [StoredEvent(1, _task("first"))])  # schema, writer
        async with store.engine.begin() as connection:
            await connection.execute(
                sent_messages.insert().values(
                    scope="s", message_id="m", task_id="first", created=time.time()
                )
            )  # this transaction now holds the write lock
            ids = [f"w{number}" for number in range(TASKS)]
            writes = asyncio.gather(*(store.append(t, [StoredEvent(1, _task(t))]) for t in ids))
            await asyncio.sleep(0.05)  # the writer has tried, and must not have blocked us
            assert not writes.done()
        await asyncio.wait_for(writes, 10)
        for task_id in ids:
            assert [stored.sequence for stored in await store.events(task_id)] == [1]
        assert await store.find_message("s", "m") is not None
    finally:
        await store.aclose()


async def test_the_wal_is_checkpointed_into_the_database_while_the_writer_commits(
    tmp_path: Path,
) -> None:
    """The writer's commits never checkpoint (that may fsync, on the event loop); the
    checkpointer's thread copies the WAL into the database file as commits add up."""
    store = SQLStore(sqlite_url(tmp_path))
    database = tmp_path / "tasks.db"
    try:
        await store.append("t", [StoredEvent(1, _task("t"))])
        before = database.stat().st_size
        for sequence in range(2, 2 + 3 * _CHECKPOINT_EVERY):  # one commit each
            await store.append("t", [StoredEvent(sequence, _chunk("t", "x" * 2000))])
        deadline = time.monotonic() + 20
        while database.stat().st_size <= before:  # the checkpointer runs on its own time
            assert time.monotonic() < deadline, "the WAL was never checkpointed"
            await asyncio.sleep(0.05)
    finally:
        await store.aclose()


def _nice(thread_id: int) -> int:
    """A thread's nice value, as Linux keeps it (field 19 of its stat)."""
    stat = Path(f"/proc/self/task/{thread_id}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])


@pytest.mark.skipif(sys.platform != "linux", reason="a nice value per thread is Linux's")
async def test_the_checkpointer_runs_at_the_lowest_priority_and_the_loop_keeps_its_own(
    tmp_path: Path,
) -> None:
    """The checkpointer's thread yields the CPU to the event loop's (its checkpoints took
    half the CPU from the requests in flight); the loop's thread keeps its priority."""
    loop_nice = _nice(threading.get_native_id())
    store = SQLStore(sqlite_url(tmp_path))
    try:
        await store.append("t", [StoredEvent(1, _task("t"))])  # starts the checkpointer
        thread = getattr(store.writer, "_checkpointer")._thread  # noqa: B009
        deadline = time.monotonic() + 60
        while True:
            if thread.native_id is not None and _nice(thread.native_id) == 19:
                break
            assert time.monotonic() < deadline, "no checkpointer thread at nice 19"
            await asyncio.sleep(0.01)
        assert _nice(threading.get_native_id()) == loop_nice
    finally:
        await store.aclose()


@pytest.mark.skipif(
    sys.platform != "linux" or not _can_hurry(), reason="SCHED_IDLE and leaving it: Linux"
)
async def test_the_checkpointer_idles_and_a_checkpoint_that_falls_behind_is_hurried(
    tmp_path: Path,
) -> None:
    """Where the process may take a thread out of SCHED_IDLE again, the checkpointer
    waits in it (its slices of a busy CPU five times rarer than at nice 19); hurried, it
    runs at nice 19 under the ordinary policy, and goes back to SCHED_IDLE once its
    checkpoint is done."""
    store = SQLStore(sqlite_url(tmp_path))
    try:
        await store.append("t", [StoredEvent(1, _task("t"))])  # starts the checkpointer
        checkpointer = getattr(store.writer, "_checkpointer")  # noqa: B009
        thread = await _checkpointer_at(checkpointer, os.SCHED_IDLE)
        _hurry(thread)
        assert os.sched_getscheduler(thread) == os.SCHED_OTHER
        assert _nice(thread) == 19
        checkpointer.wake()
        assert await _checkpointer_at(checkpointer, os.SCHED_IDLE) == thread
    finally:
        await store.aclose()


async def _checkpointer_at(checkpointer: Any, policy: int) -> int:
    """The store's own checkpointer thread's id, once it is under ``policy`` (other
    stores of the same test process have checkpointer threads of the same name)."""
    deadline = time.monotonic() + 60  # a loaded machine may run it late
    while True:
        thread: int | None = checkpointer._thread.native_id
        if thread is not None and os.sched_getscheduler(thread) == policy:
            return thread
        assert time.monotonic() < deadline, f"no checkpointer thread under policy {policy}"
        await asyncio.sleep(0.01)


# -- kill -9 after the acknowledgement -----------------------------------------------


@contextlib.contextmanager
def _server(database: Path, log: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``parley serve`` (the demo agent) on ``database`` in a process of its own."""
    with parley_serve(["--db", f"sqlite:///{database}"], log) as (process, base):
        try:
            yield f"{base}/", process
        finally:
            if process.poll() is None:
                process.kill()


def _send(method: str, text: str, number: int) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": number,
        "method": method,
        "params": {
            "message": {
                "kind": "message",
                "messageId": f"m-{number}",
                "role": "user",
                "parts": [{"kind": "text", "text": text}],
            }
        },
    }
    return body


def _get(url: str, task_id: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task_id}}
    answer: dict[str, Any] = httpx.post(url, json=body, timeout=10).json()
    return answer["result"]  # type: ignore[no-any-return]


def test_completed_send_survives_kill_9(tmp_path: Path) -> None:
    """Each task a blocking message/send answered completed is there after SIGKILL."""
    database = tmp_path / "parley.db"
    answered: list[str] = []
    with _server(database, tmp_path / "serve.log") as (url, process):
        with httpx.Client(timeout=10) as client:
            for number in range(20):
                result = client.post(url, json=_send("message/send", f"echo {number}", number))
                task = result.json()["result"]
                assert task["status"]["state"] == "completed"
                answered.append(task["id"])
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    with _server(database, tmp_path / "serve.log") as (url, _):
        for number, task_id in enumerate(answered):
            task = _get(url, task_id)
            assert task["status"]["state"] == "completed"
            assert task["artifacts"][0]["parts"][0]["text"] == f"echo {number}"


def test_streamed_event_survives_kill_9(tmp_path: Path) -> None:
    """An artifact chunk a client has read from a stream is stored: after SIGKILL in the
    middle of the run, the restarted server reports the task with that chunk."""
    database = tmp_path / "parley.db"
    with _server(database, tmp_path / "serve.log") as (url, process):
        request = _send("message/stream", "write a report", 1)
        seen: list[dict[str, Any]] = []
        with httpx.stream("POST", url, json=request, timeout=10) as response:
            for line in response.iter_lines():
                if line.startswith("data:"):
                    seen.append(json.loads(line[5:])["result"])
                    if seen[-1]["kind"] == "artifact-update":
                        os.kill(process.pid, signal.SIGKILL)  # acknowledged: it was read
                        break
        process.wait(10)
    task_id = seen[0]["id"]
    chunk = seen[-1]["artifact"]["parts"][0]["text"]
    with _server(database, tmp_path / "serve.log") as (url, _):
        task = _get(url, task_id)
        texts = [part["text"] for part in task["artifacts"][0]["parts"]]
        assert texts[0] == chunk
        assert task["status"]["state"] != TaskState.working.value  # settled at restart
