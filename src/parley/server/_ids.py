"""Ids and timestamps, made several times per request and so made cheaply.

``new_id`` gives version 4 UUIDs from the operating system's secure random source, read
4 KiB at a time rather than 16 bytes per id (one system call per 128 ids); a forked
child starts a pool of its own, so two processes never hand out the same ids.
``new_ordered_id`` gives version 7 UUIDs (RFC 9562: the time in milliseconds, then 74
random bits), for the task and context ids the server makes: ids made one after the
other sort together, so a SQL store files each new task at the end of its indexes
instead of at a random place (with a million tasks stored, random ids cost a send
about 12 page reads more and twice the bytes written). ``now``
formats the date and time once per second and only the microseconds per call.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

_POOL_BYTES = 4096
_VARIANT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}


class _Pool:
    __slots__ = ("at", "hex")

    def __init__(self) -> None:
        self.hex = ""
        self.at = 0

    def take(self) -> str:
        """32 random hex digits."""
        at = self.at
        if at == len(self.hex):
            self.hex, at = os.urandom(_POOL_BYTES).hex(), 0
        self.at = at + 32
        return self.hex[at : at + 32]

    def reset(self) -> None:
        self.hex, self.at = "", 0


_pool = _Pool()
os.register_at_fork(after_in_child=_pool.reset)


def new_id() -> str:
    """A fresh random (version 4) UUID, as text."""
    h = _pool.take()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


def new_ordered_id() -> str:
    """A fresh time-ordered (version 7) UUID, as text: 48 bits of Unix time in
    milliseconds, then random bits from the same pool as ``new_id``."""
    h = _pool.take()
    t = f"{time.time_ns() // 1_000_000:012x}"
    return f"{t[:8]}-{t[8:]}-7{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


class _Clock:
    __slots__ = ("prefix", "second")

    def __init__(self) -> None:
        self.second = -1
        self.prefix = ""

    def now(self) -> str:
        moment = time.time()
        second = int(moment)
        if second != self.second:
            self.second = second
            self.prefix = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return f"{self.prefix}.{int((moment - second) * 1_000_000):06d}+00:00"


now = _Clock().now
"""The current time as the ISO 8601 string A2A timestamps use (UTC, microseconds)."""
