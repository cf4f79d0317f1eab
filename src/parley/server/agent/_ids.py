"""Ids and timestamps the server makes.

``new_id`` gives version 4 UUIDs and ``new_ordered_id`` version 7 ones (RFC 9562: the
time in milliseconds, then 74 random bits), for the task and context ids the server
makes: ids made one after the other sort together, so a SQL store files each new task at
the end of its indexes instead of at a random place (with random ids, a send to a large
store reads and writes index pages all over the file). ``now`` is the current time as
A2A timestamps write it. Each asks ``parley._speedups`` first (a pool of random text, a
clock that formats once per second) and makes its value the plain way when it declines.
"""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime
from time import time_ns

from parley import _speedups


def new_id() -> str:
    """A fresh random (version 4) UUID, as text."""
    return _speedups.new_id() or str(uuid.uuid4())


def new_ordered_id() -> str:
    """A fresh time-ordered (version 7) UUID, as text: 48 bits of Unix time in
    milliseconds, the version, 12 random bits, the variant, 62 random bits."""
    fast = _speedups.new_ordered_id()
    if fast is not None:
        return fast
    bits = (time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10))
    bits = bits & ~(0xF << 76) | 0x7 << 76  # the version, 7
    bits = bits & ~(0x3 << 62) | 0x2 << 62  # the variant, 10
    return str(uuid.UUID(int=bits))


def now() -> str:
    """The current time as the ISO 8601 string A2A timestamps use (UTC, microseconds)."""
    return timestamp(time_ns() // 1000)


def timestamp(moment: int) -> str:
    """``now`` of an earlier moment: ``time.time_ns() // 1000`` then (epoch
    microseconds), kept as a number until (and unless) its text is needed."""
    fast = _speedups.timestamp(moment)
    if fast is not None:
        return fast
    second, micro = divmod(moment, 1_000_000)
    when = datetime.fromtimestamp(second, UTC).replace(microsecond=micro)
    return when.isoformat(timespec="microseconds")
