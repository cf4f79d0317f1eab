"""Group commit for SQLite: the writes of many tasks in one transaction, on the event
loop's own thread.

Theory of operation
-------------------
Through SQLAlchemy and aiosqlite every write is its own transaction on a pooled
connection, each statement a hop to that connection's thread and back, and the pooled
connections take turns at SQLite's one write lock: most of a request's CPU went to the
hops and the turns.

``SQLiteWriter`` owns one ``sqlite3`` connection. A write is a plain function of that
connection (``Write``); ``submit`` queues it and waits. The first write queued after a
flush schedules the next one ``_TURNS`` turns of the event loop later (``call_soon``
hop by hop); ``flush`` runs every write queued by then in one transaction and commits,
then answers each caller. An acknowledged write is therefore in the WAL file
(``synchronous=NORMAL``: it survives the process crashing; an OS crash or power loss
may lose the last transactions). The busier the server, the more writes share a
transaction.

Why several turns: a request's write is queued a few turns after its bytes are read
(its ASGI task starts in the next turn, the agent's run in the one after), so requests
read in consecutive turns queue their writes in consecutive turns. A flush in the very
next turn commits the requests of about one read; a few turns later it gathers those of
several. A commit rewrites the last page of each B-tree it touches whatever it carries,
so small commits cost WAL frames and the CPU that writes and copies them. On an idle
loop the turns between are empty and pass at once.

Why on the loop's thread: a commit in WAL mode with ``synchronous=NORMAL`` is a
``write()`` into the page cache, never an ``fsync``. A writer thread costs more than that
in hand-offs: each statement gives the GIL up and waits up to the interpreter's switch
interval to get it back from a busy event loop, and every batch takes a queue wake-up and
a ``call_soon_threadsafe``; with the server on one CPU that would be most of SQLite's
cost and its tail latency. What may ``fsync``, the checkpoint that copies the WAL into
the database, runs on a thread of its own (``_Checkpointer``, every ``_CHECKPOINT_EVERY``
commits or ``_CHECKPOINT_ROWS`` rows written, whichever comes first; the writer's
automatic checkpoint is off), at the lowest CPU priority: at the loop's priority a
checkpoint takes half the CPU from every request in flight while it runs (the tail of the
latency).

The WAL starts over (the next commit writes from the file's start) only after a
checkpoint has copied all of it, which a checkpoint beside a busy writer seldom does: the
writer commits while it copies. So once the WAL passes ``wal_limit``, the checkpointer
sees to it, on its thread (``_Checkpointer._restart``): it catches up with passive
checkpoints, each copying what was committed during the one before, until one finds
nothing new, which happens in a pause between two of the writer's commits; the writer's
next commit finds every frame copied and starts the WAL over. Only if no pass does within
``_CATCH_UP`` it runs a ``RESTART`` checkpoint, which holds SQLite's write lock while it
copies the last frames; the writer's ``BEGIN IMMEDIATE`` finds the lock taken meanwhile
and tries again a millisecond later (as for a pooled connection's transaction): every
request in flight waits, which is why it is the last resort. Nothing of that runs on the
loop but the one ``fsync`` of the new WAL header in the commit that starts it over
(SQLite's, against a reordered write after a restart).

The writer never waits for SQLite's write lock on the loop: the store's pooled
SQLAlchemy connections (push configs, idempotency claims, retention) hold it across
awaits of this very loop. If ``BEGIN IMMEDIATE`` finds the lock taken, the batch stays
queued and ``flush`` runs again a millisecond later.

If the shared transaction fails (a duplicate event, a lost lease), it is rolled back
and each write of the batch runs again in a transaction of its own, so each caller gets
its own result and no write is sunk by another's.

The statements are SQLAlchemy Core compiled once, at start-up, for SQLite's positional
parameters, so the tables are still described in one place (``_schema``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import operator
import os
import sqlite3
import sys
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy.dialects import sqlite

if TYPE_CHECKING:
    from parley.telemetry import Telemetry

Write = Callable[[sqlite3.Connection], Any]
"""One caller's write: runs in ``flush``, inside the batch's transaction."""


class Executes(Protocol):
    """What the store's writes (``_group``) use of a ``sqlite3`` connection: a
    ``sqlite3.Connection`` itself, or ``_memory_writer``'s view of an engine's."""

    def execute(self, sql: str, parameters: Any = (), /) -> Any: ...

    def executemany(self, sql: str, rows: Any, /) -> Any: ...


@dataclass(frozen=True, slots=True)
class Statement:
    """A statement compiled for ``sqlite3`` (or asyncpg): its SQL, the order of its
    parameters, and the values of the literals SQLAlchemy made parameters of."""

    sql: str
    names: tuple[str, ...]
    literals: dict[str, Any]

    @classmethod
    def of(cls, statement: Any, dialect: Any = None) -> Statement:
        """``statement`` compiled for ``dialect`` (SQLite's by default)."""
        compiled = statement.compile(dialect=dialect or sqlite.dialect())
        literals = {name: value for name, value in compiled.params.items() if value is not None}
        return cls(str(compiled), tuple(compiled.positiontup or ()), literals)

    def parameters(self, values: dict[str, Any]) -> tuple[Any, ...]:
        if not self.literals:  # every parameter is a value: one C call
            return _values(self.names)(values)
        literals = self.literals
        return tuple(values[name] if name in values else literals[name] for name in self.names)


@functools.cache
def _values(names: tuple[str, ...]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """``values[name]`` for each of ``names``, as a tuple."""
    if len(names) == 1:
        name = names[0]
        return lambda values: (values[name],)
    return operator.itemgetter(*names)


@dataclass(slots=True)
class _Job:
    write: Write
    future: asyncio.Future[Any]


_Outcome = tuple[_Job, Any, BaseException | None]
"""A job, its result, and what it raised."""

_RETRY = 0.001
"""Seconds to wait before trying again for the write lock another connection holds."""

_TURNS = 3
"""Turns of the event loop from the first write queued to the flush that commits it:
enough for the requests read in the next few turns to share the commit (see the module
docs), few enough that a lone request's commit does not wait; more turns gathered no
more."""

_CHECKPOINT_EVERY = 256
"""Commits between two checkpoints of the WAL into the database (by the checkpointer),
at most."""

_CHECKPOINT_ROWS = 4096
"""Rows written between two checkpoints, at most: at 500 streams a commit holds 500
writes, and 256 commits were minutes of WAL growth."""

WAL_LIMIT = 32 * 1024 * 1024
"""Bytes of WAL past which the checkpointer starts the WAL over (``_Checkpointer``)."""


class SQLiteWriter:
    """One connection that commits the writes queued during a few turns of the event
    loop (``_TURNS``) in one transaction, on the event loop's thread."""

    def __init__(self, path: str, *, timeout: float = 30.0, wal_limit: int = WAL_LIMIT) -> None:
        self.path = path
        self.timeout = timeout
        self.wal_limit = wal_limit
        self._pending: list[_Job] = []
        self._lock = threading.Lock()  # the connection and the queue: several loops may write
        self._connection: sqlite3.Connection | None = None
        self._checkpointer: _Checkpointer | None = None
        self._commits = 0  # since the checkpointer was last woken
        self._wake_at = _CHECKPOINT_ROWS  # the connection's total_changes
        self.telemetry: Telemetry | None = None
        """When set, each commit is a span linked to the writes it carries."""
        self._origins: weakref.WeakKeyDictionary[asyncio.Future[Any], Any] = (
            weakref.WeakKeyDictionary()
        )
        """The span each queued write was submitted in (while ``telemetry`` is set)."""

    async def submit(self, write: Write) -> Any:
        """Run ``write`` in the next batch; returns its result once the batch is
        committed, or raises what it raised."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if self.telemetry is not None:
            self._origins[future] = self.telemetry.origin()
        with self._lock:
            first = not self._pending
            self._pending.append(_Job(write, future))
        if first:
            loop.call_soon(self._flush_after, loop, _TURNS - 1)
        return await future

    def _flush_after(self, loop: asyncio.AbstractEventLoop, turns: int) -> None:
        """``flush`` once ``loop`` has turned ``turns`` more times."""
        if turns > 0:
            loop.call_soon(self._flush_after, loop, turns - 1)
        else:
            self.flush()

    def flush(self) -> None:
        """Commit every write queued so far, in one transaction, and answer the callers.
        While another connection of the process holds SQLite's write lock (a pooled
        SQLAlchemy transaction), try again a millisecond later rather than wait for it
        here, where that transaction may need this event loop to finish."""
        with self._lock:
            batch, self._pending = self._pending, []
            if not batch:
                return
            try:
                connection = self._connection or self._connect()
            except Exception as error:
                outcomes: list[_Outcome] = [(job, None, error) for job in batch]
                waiting: list[_Job] = []
            else:
                outcomes, waiting = self._commit(connection, batch)
                self._commits += 1
                if self._commits >= _CHECKPOINT_EVERY or connection.total_changes >= self._wake_at:
                    self._commits = 0
                    self._wake_at = connection.total_changes + _CHECKPOINT_ROWS
                    if self._checkpointer is not None:
                        self._checkpointer.wake()
            if waiting:
                self._pending[:0] = waiting
                waiting[0].future.get_loop().call_later(_RETRY, self.flush)
        _settle(outcomes)

    def _commit(
        self, connection: sqlite3.Connection, batch: list[_Job]
    ) -> tuple[list[_Outcome], list[_Job]]:
        telemetry = self.telemetry
        if telemetry is None:
            return _commit(connection, batch)
        origins = [self._origins.pop(job.future, None) for job in batch]
        with telemetry.store_batch(origins):
            return _commit(connection, batch)

    @property
    def restarts(self) -> int:
        """How often the WAL was made to start over (``_Checkpointer._restart``)."""
        return 0 if self._checkpointer is None else self._checkpointer.restarts

    @property
    def forced_restarts(self) -> int:
        """How many of ``restarts`` took a ``RESTART`` checkpoint, which holds the
        writer back while it copies the last frames."""
        return 0 if self._checkpointer is None else self._checkpointer.forced

    async def aclose(self) -> None:
        """Commit what is queued, then close the connection and stop the checkpointer."""
        self.flush()
        while self._pending:
            await asyncio.sleep(_RETRY)
            self.flush()
        with self._lock:
            connection, self._connection = self._connection, None
            checkpointer, self._checkpointer = self._checkpointer, None
        if checkpointer is not None:
            await asyncio.to_thread(checkpointer.stop)
        if connection is not None:
            connection.close()

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(  # no busy wait: ``flush`` tries again
            self.path, timeout=0, isolation_level=None, check_same_thread=False
        )
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            # Checkpoints (copying the WAL into the database, with fsync) run on a thread
            # of their own, never in a commit on the event loop.
            connection.execute("PRAGMA wal_autocheckpoint=0")
        except BaseException:  # not a database, locked, ...: the caller gets the error
            connection.close()
            raise
        self._connection = connection
        self._checkpointer = _Checkpointer(self.path, self.timeout, self.wal_limit)
        return connection


def _commit(connection: sqlite3.Connection, batch: list[_Job]) -> tuple[list[_Outcome], list[_Job]]:
    """Run ``batch`` in one transaction; returns each job's outcome and the jobs left
    waiting for the write lock."""
    try:
        results = _transaction(connection, [job.write for job in batch])
    except Exception as error:
        if len(batch) == 1:
            return [(batch[0], None, error)], []
        return _alone(connection, batch)
    if results is None:
        return [], batch
    return [(job, result, None) for job, result in zip(batch, results, strict=True)], []


def _alone(connection: sqlite3.Connection, batch: list[_Job]) -> tuple[list[_Outcome], list[_Job]]:
    """Each job of a batch that failed together in a transaction of its own."""
    outcomes: list[_Outcome] = []
    for index, job in enumerate(batch):
        try:
            results = _transaction(connection, [job.write])
        except Exception as error:
            outcomes.append((job, None, error))
            continue
        if results is None:
            return outcomes, batch[index:]
        outcomes.append((job, results[0], None))
    return outcomes, []


def _transaction(connection: sqlite3.Connection, writes: list[Write]) -> list[Any] | None:
    """The results of ``writes``, run and committed in one transaction; ``None`` when
    another connection holds the write lock."""
    try:
        connection.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        if error.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY:
            return None
        raise
    try:
        results = [write(connection) for write in writes]
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return results


def _settle(outcomes: list[_Outcome]) -> None:
    """Hand each result to its caller: directly on this loop, one thread-safe wake-up
    per other event loop."""
    try:
        here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    elsewhere: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
    for outcome in outcomes:
        loop = outcome[0].future.get_loop()
        if loop is here:
            _resolve((outcome,))
        else:
            elsewhere.setdefault(loop, []).append(outcome)
    for loop, settled in elsewhere.items():
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(_resolve, settled)


def _resolve(settled: Iterable[_Outcome]) -> None:
    for job, result, error in settled:
        future = job.future
        if future.done():  # the caller was cancelled; the write stands
            continue
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)


class _Checkpointer:
    """A thread with its own connection that checkpoints the WAL when woken, so no
    commit on the event loop waits for an fsync, and starts the WAL over once it is past
    ``wal_limit``."""

    def __init__(self, path: str, timeout: float, wal_limit: int) -> None:
        self.path = path
        self.timeout = timeout
        self.wal_limit = wal_limit
        self.restarts = 0  # checkpoints that left the WAL to start over
        self.forced = 0  # of them, RESTART checkpoints (the writer held back)
        self._wanted = threading.Event()
        self._stopping = False
        self._asked = 0  # checkpoints asked for (by ``wake``)
        self._done = 0  # the last of them a finished checkpoint served
        self._thread = threading.Thread(target=self._serve, name="parley-sqlite-checkpoint")
        self._thread.daemon = True
        self._thread.start()

    def wake(self) -> None:
        """Ask for a checkpoint. If the one asked for two wake-ups ago is not done yet
        (the loop left the thread too little CPU), the thread gets the share of a thread
        at ``nice`` 19 until it is, so the WAL cannot grow without bound. (One wake-up
        late is usual for a checkpoint at ``SCHED_IDLE`` on a CPU the loop keeps busy:
        it gets only the slices the loop leaves.)"""
        if self._done < self._asked - 1:
            _hurry(self._thread.native_id)
        self._asked += 1
        self._wanted.set()

    def stop(self) -> None:
        self._stopping = True
        self._wanted.set()
        self._thread.join()

    def _serve(self) -> None:
        connection = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            frame = connection.execute("PRAGMA page_size").fetchone()[0] + _FRAME_HEADER
            near = False  # the WAL was past an eighth of its limit at the last checkpoint
            restarted = -1  # the WAL's frames at the last restart, until the writer writes
            while True:
                if near:  # the next checkpoint as soon as the writer wakes it
                    _hurry(threading.get_native_id())
                    _renice(_CATCH_UP_NICE)
                else:
                    _yield_cpu()
                self._wanted.wait()
                self._wanted.clear()
                if self._stopping:
                    return
                asked = self._asked
                state = _checkpoint(connection, "PASSIVE")
                if state is not None and state[0] != restarted:
                    # soon again after a restart: the writer wrote on meanwhile
                    near = restarted >= 0 or state[0] * frame > self.wal_limit // 8
                    restarted = -1
                    if state[0] * frame > self.wal_limit:
                        restarted = self._restart(connection, frame, state[0])
                self._done = asked
        finally:
            connection.close()

    def _restart(self, connection: sqlite3.Connection, frame: int, log: int) -> int:
        """Start the WAL over; returns its frames then (-1: busy, the next wake-up
        tries again). Passive checkpoints at ``_CATCH_UP_NICE``, each copying what the
        writer wrote during the one before, until one finds nothing new to copy: the
        whole WAL is in the database, so the writer's next transaction starts the WAL
        over by itself (SQLite does when it finds every frame copied), held up by
        nothing. The writer commits in bursts, one every ``_TURNS`` turns of the loop, and the
        last passes copy a commit or two, so one usually falls between two commits.
        Only if none does in ``_CATCH_UP`` passes (or the WAL is past twice the limit)
        a ``RESTART`` checkpoint, at the ordinary priority (where the process may),
        holds the write lock while it copies the last frames and waits at most
        ``_RESTART_WAIT`` for readers of older frames (the writer waits as long: every
        request in flight). The file keeps its size (no ``journal_size_limit``: cutting
        the file is slow, and the commit that starts the WAL over would do it on the
        loop), and writing over its frames costs less than appending to it."""
        _hurry(threading.get_native_id())
        _renice(_CATCH_UP_NICE)
        for _ in range(_CATCH_UP):
            state = _checkpoint(connection, "PASSIVE")
            if state is None:
                return -1
            if state[0] <= log and state[1] == state[0]:  # nothing new, all copied
                self.restarts += 1
                return state[0]
            added, log = state[0] - log, state[0]
            if added * frame < self.wal_limit // _SHORT:
                _renice(0)  # a short pass from now on: it may fall between two commits
            if log * frame > 2 * self.wal_limit:
                break  # no time left
        _renice(0)
        connection.execute(f"PRAGMA busy_timeout={int(_RESTART_WAIT * 1000)}")
        try:
            state = _checkpoint(connection, "RESTART")
        finally:
            connection.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
        if state is None:
            return -1
        self.restarts += 1
        self.forced += 1
        return state[0]


_FRAME_HEADER = 24
"""Bytes before each page in the WAL file."""

_CATCH_UP = 16
"""Passive checkpoints at most before a restart's ``RESTART`` checkpoint."""

_SHORT = 64
"""A catch-up pass is short when it copies less than ``wal_limit // _SHORT`` (a few
hundred KB): the passes after it run at ``nice`` 0, to end between two of the writer's
commits (a turn of the loop apart). A longer one at ``nice`` 0 would take half the CPU
from every request in flight while it copied."""

_CATCH_UP_NICE = 10
"""The checkpointer's ``nice`` value while it catches up for a restart: about a tenth of
a CPU the loop keeps busy (copying the WAL takes far less CPU than writing it did), in
slices a request waits out, where ``nice`` 19's small share falls ever further behind."""

_RESTART_WAIT = 0.005
"""Seconds a ``RESTART`` checkpoint waits for the write lock, and then for readers of
older frames while it holds it (the writer waits as long; past it the next wake-up
tries again). Short, because every request in flight waits as long; a longer wait
restarted the WAL no more often."""


def _checkpoint(connection: sqlite3.Connection, mode: str) -> tuple[int, int] | None:
    """Checkpoint the WAL (``mode``: ``PASSIVE`` or ``RESTART``); the frames in the
    WAL and how many of them are in the database, or ``None`` when busy."""
    try:
        # fetchall: the statement ends here (an open one would hold a read snapshot,
        # and the WAL could not start over)
        rows = connection.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
    except sqlite3.Error:
        return None
    if not rows or rows[0][0] != 0:
        return None
    return rows[0][1], rows[0][2]


def _yield_cpu() -> None:
    """Give the calling thread the lowest CPU priority (Linux: priority is per thread):
    ``SCHED_IDLE`` where ``_hurry`` can take it back out, ``nice`` 19 otherwise.

    A checkpoint copies every page written since the last one into the database. At the
    priority of the event loop's thread it takes half the CPU from the loop while it
    runs, so every request in flight then waits that long: the tail of the latency. At
    ``nice`` 19 it runs when the loop has nothing to do, or in slices of a busy CPU (its
    weight is 15 to the loop's 1024, each slice delaying every request in flight);
    ``SCHED_IDLE``'s weight is 3, so on a busy CPU its slices are five times rarer, and
    ``_hurry`` gives the weight of ``nice`` 19 back to a checkpoint that falls behind."""
    if sys.platform != "linux":  # elsewhere the nice value would be the whole process's
        return
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, 19)
    if _can_hurry():
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _renice(value: int) -> None:
    """Set the calling thread's ``nice`` value (Linux), where the process may lower it
    (root, or ``RLIMIT_NICE``); it stays where it is otherwise."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, value)


def _hurry(thread: int | None) -> None:
    """Move a ``SCHED_IDLE`` thread back to the ordinary policy (at ``nice`` 19)."""
    if thread is not None and sys.platform == "linux" and _can_hurry():
        with contextlib.suppress(OSError):  # the thread has ended
            os.sched_setscheduler(thread, os.SCHED_OTHER, os.sched_param(0))


@functools.cache
def _can_hurry() -> bool:
    """Whether a thread of this process at ``nice`` 19 may leave ``SCHED_IDLE`` again
    (Linux asks for ``RLIMIT_NICE`` >= 1 or the ``CAP_SYS_NICE`` capability): tried once,
    on a thread of its own. Where it may not, the checkpointer stays at ``nice`` 19, so a
    checkpoint never falls behind for want of CPU."""
    if not hasattr(os, "SCHED_IDLE"):
        return False
    left: list[bool] = []

    def probe() -> None:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, 19)
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            left.append(True)

    thread = threading.Thread(target=probe, name="parley-sqlite-probe")
    thread.start()
    thread.join()
    return bool(left)
