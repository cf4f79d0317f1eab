"""Loaded by ``bench/send_phases.py`` into the served process (this folder on its
``PYTHONPATH``): times each send's phases and each SQLite writer flush from inside the
server, and writes them as JSON to ``$SEND_PHASES_OUT`` when the server gets SIGTERM.

A send's record, in ``time.perf_counter`` seconds: uvicorn's request cycle made (its
request read), the app started on it, its first write submitted to the group writer,
the flush that committed it started and ended, its last body sent. A flush's: start,
end, writes, the loop thread's CPU in it, the WAL file's size after it, and the thread's
voluntary and involuntary context switches in it (Linux)."""

from __future__ import annotations

import os

if os.environ.get("SEND_PHASES_OUT"):
    import atexit
    import contextvars
    import json
    import signal
    import sys
    import threading
    import time
    from typing import Any

    _clock = time.perf_counter
    _current: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar(
        "send_phases", default=None
    )
    _sends: list[list[float]] = []
    _flushes: list[tuple[float, ...]] = []
    _waiting: list[list[float]] = []  # sends submitted, not committed yet
    _status: list[Any] = []

    def _switches() -> tuple[int, int]:
        if not _status:
            path = f"/proc/self/task/{threading.get_native_id()}/status"
            _status.append(open(path, "rb", buffering=0))  # noqa: SIM115
        status = _status[0]
        status.seek(0)
        text = status.read()
        counts = []
        for name in (b"\nvoluntary_ctxt_switches:", b"nonvoluntary_ctxt_switches:"):
            start = text.index(name) + len(name)
            counts.append(int(text[start : text.index(b"\n", start)]))
        return counts[0], counts[1]

    def _patch_cycle(cycle: Any) -> None:
        made, run_asgi, send = cycle.__init__, cycle.run_asgi, cycle.send

        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            made(self, *args, **kwargs)
            self.send_phases = [_clock(), 0.0, 0.0, 0.0, 0.0, 0.0]

        async def run(self: Any, app: Any) -> None:
            self.send_phases[1] = _clock()
            _current.set(self.send_phases)
            await run_asgi(self, app)

        async def sent(self: Any, message: Any) -> None:
            await send(self, message)
            if message.get("type") == "http.response.body" and not message.get("more_body"):
                self.send_phases[5] = _clock()
                _sends.append(self.send_phases)

        cycle.__init__, cycle.run_asgi, cycle.send = init, run, sent

    from uvicorn.protocols.http import h11_impl

    _patch_cycle(h11_impl.RequestResponseCycle)
    try:
        from uvicorn.protocols.http import httptools_impl
    except ImportError:
        pass
    else:
        _patch_cycle(httptools_impl.RequestResponseCycle)

    from parley.stores.sql import _writer

    _submit, _flush = _writer.SQLiteWriter.submit, _writer.SQLiteWriter.flush

    async def _submitted(self: Any, write: Any, *more: Any) -> Any:
        record = _current.get()
        if record is not None and not record[2]:
            record[2] = _clock()
            _waiting.append(record)
        return await _submit(self, write, *more)

    def _flushed(self: Any) -> None:
        start, cpu, switches = _clock(), time.thread_time(), _switches()
        writes = len(self._pending)
        taken = _waiting[:]
        _waiting.clear()
        _flush(self)
        end, cpu, after = _clock(), time.thread_time() - cpu, _switches()
        if not writes:
            return
        try:
            wal = os.stat(self.path + "-wal").st_size
        except OSError:
            wal = 0
        _flushes.append(
            (start, end, writes, cpu, wal, after[0] - switches[0], after[1] - switches[1])
        )
        if self._pending:  # the write lock was taken: they wait for the next flush
            _waiting.extend(taken)
            return
        for record in taken:
            record[3], record[4] = start, end

    _writer.SQLiteWriter.submit = _submitted  # type: ignore[method-assign]
    _writer.SQLiteWriter.flush = _flushed  # type: ignore[method-assign]

    def _dump() -> None:
        with open(os.environ["SEND_PHASES_OUT"], "w") as out:
            json.dump({"sends": _sends, "flushes": _flushes}, out)

    def _stop(signum: int, frame: Any) -> None:
        # uvicorn puts this handler back after its shutdown and raises SIGTERM again
        _dump()
        sys.stdout.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, _stop)
    atexit.register(_dump)
