"""SQLite's WAL stays bounded under sustained load (a real database file).

A checkpoint copies the frames the WAL had when it began; the WAL starts over only when
every frame is copied, which never happened while the group writer committed during each
checkpoint: the WAL grew until the load paused. Once the WAL
passes ``wal_limit`` the checkpointer catches up until a pass finds nothing new to copy
(or, failing that, runs a ``RESTART`` checkpoint on its own thread, holding the writer
back meanwhile), and the next commit starts the WAL over (``_writer._Checkpointer``).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from parley.stores import StoredEvent
from parley.stores.sql import SQLStore
from parley.stores.sql._writer import SQLiteWriter
from parley.types import Artifact, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TextPart
from tests.stores.databases import sqlite_url

LIMIT = 1024 * 1024
"""The test's WAL limit (the default is 32 MB)."""

WORKERS = 16
CHUNKS = 10


def _events(task_id: str) -> list[StoredEvent]:
    task = Task(id=task_id, context_id="c", status=TaskStatus(state=TaskState.working))
    chunks = [
        TaskArtifactUpdateEvent(
            task_id=task_id,
            context_id="c",
            artifact=Artifact(artifact_id="a", parts=[TextPart(text="x" * 200)]),
            append=True,
        )
        for _ in range(CHUNKS)
    ]
    return [StoredEvent(1, task)] + [
        StoredEvent(sequence, chunk) for sequence, chunk in enumerate(chunks, 2)
    ]


async def test_the_wal_stays_bounded_under_sustained_writes(tmp_path: Path) -> None:
    """Sixteen writers append streams without a pause until 64 times the limit has gone
    into event rows (about 380 times the limit into the WAL: it grew so before); the WAL
    file never grows past 160 times the limit, it was started over, and the events
    written are there. The margin: at this rate the writer adds about 4 times the test's
    limit between two wake-ups of the checkpointer, and on a loaded machine a
    checkpoint's catching up takes long, so the WAL peaks at tens of times the limit."""
    store = SQLStore(sqlite_url(tmp_path))
    writer = store.writer
    assert isinstance(writer, SQLiteWriter)
    writer.wal_limit = LIMIT  # before its connection (and checkpointer) starts
    wal = tmp_path / "tasks.db-wal"
    written = 0  # bytes of event JSON appended: the WAL takes more than that
    peak = 0
    tasks: list[str] = []

    async def work(number: int) -> None:
        nonlocal written, peak
        count = 0
        while written < 64 * LIMIT:
            task_id = f"t{number}-{count}"
            count += 1
            events = _events(task_id)
            await store.append(task_id, events)
            tasks.append(task_id)
            written += sum(len(stored.to_json()) for stored in events)
            if wal.exists():
                peak = max(peak, wal.stat().st_size)

    try:
        started = time.monotonic()
        await asyncio.gather(*(work(number) for number in range(WORKERS)))
        assert time.monotonic() - started < 120
        assert peak <= 160 * LIMIT, f"the WAL grew to {peak} bytes"
        assert writer.restarts > 0, "the WAL was never started over"
        for task_id in tasks[:: max(1, len(tasks) // 50)]:
            assert len(await store.events(task_id)) == 1 + CHUNKS
    finally:
        await store.aclose()


def _started_over(wal: Path) -> int:
    """How often the WAL was started over: the checkpoint sequence number in its
    header, which SQLite counts up each time a writer writes it from its start."""
    if not wal.exists() or wal.stat().st_size < 32:
        return 0
    with wal.open("rb") as file:
        return int.from_bytes(file.read(16)[12:16], "big")


async def test_the_wal_starts_over_between_two_commits(tmp_path: Path) -> None:
    """A writer that commits in bursts with pauses between them (as the group writer
    does, a turn of the event loop apart) gets its WAL started over by the checkpointer
    catching up to it in a pause: the writer's next commit finds every frame copied and
    writes the WAL from its start. Before, every restart was a ``RESTART`` checkpoint,
    which holds the write lock while it copies the last frames: a served writer found it
    taken and every request in flight waited."""
    path = tmp_path / "wal.db"
    writer = SQLiteWriter(str(path), wal_limit=LIMIT)
    row = b"x" * 64

    def create(connection: sqlite3.Connection) -> None:
        connection.execute("CREATE TABLE chunks (body BLOB)")

    def insert(connection: sqlite3.Connection) -> None:  # 64 rows: a wake-up every 64
        connection.executemany("INSERT INTO chunks VALUES (?)", [(row,)] * 64)

    try:
        await writer.submit(create)
        deadline = time.monotonic() + 60
        while _started_over(Path(f"{path}-wal")) < 4 and time.monotonic() < deadline:
            await writer.submit(insert)
            await asyncio.sleep(0.005)
        assert _started_over(Path(f"{path}-wal")) >= 4, "the WAL was not started over"
        assert writer.forced_restarts < writer.restarts, (
            f"all {writer.restarts} restarts held the writer back"
        )
    finally:
        await writer.aclose()


def test_a_file_that_is_no_database_is_refused_and_its_connection_closed(tmp_path: Path) -> None:
    """The writer's connection is closed when its set-up fails (here: the file is not a
    SQLite database), while the caller still holds the error."""
    path = tmp_path / "not-a-database"
    path.write_bytes(b"this is a text file, not a SQLite database\n" * 200)

    def opened() -> int:
        fds = Path("/proc/self/fd")
        return sum(1 for fd in fds.iterdir() if _target(fd) == str(path))

    async def write_once() -> BaseException:
        writer = SQLiteWriter(str(path))
        try:
            await writer.submit(lambda connection: connection.execute("SELECT 1"))
        except sqlite3.DatabaseError as error:
            return error
        finally:
            await writer.aclose()
        raise AssertionError("the writer wrote to a file that is not a database")

    error = asyncio.run(write_once())
    assert "not a database" in str(error)
    assert opened() == 0  # the error (and its traceback's frames) alive, the file closed


def _target(fd: Path) -> str:
    try:
        return str(fd.readlink())
    except OSError:  # the listing's own descriptor, closed by now
        return ""
