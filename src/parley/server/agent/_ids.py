"""Ids and timestamps, made several times per request and so made cheaply.

``new_id`` gives version 4 UUIDs from the operating system's secure random source, read
4 KiB at a time rather than 16 bytes per id, and laid out as text 256 ids at a time by
a few slice assignments (each id is then one slice of that text: formatting each id on
its own cost three times as much); a forked child starts a pool of its own, so two
processes never hand out the same ids. ``new_ordered_id`` gives version 7 UUIDs (RFC
9562: the time in milliseconds, then 74 random bits), for the task and context ids the
server makes: ids made one after the other sort together, so a SQL store files each new
task at the end of its indexes instead of at a random place (with random ids, a send to a
large store reads and writes index pages all over the file).
``now`` formats the date and time once per second and only the microseconds per call
(three digits at a time, from a table), and leaves the epoch seconds of the text it made
in ``made_times``, where a store filing the status finds them without parsing it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from time import time_ns

from parley.stores._protocols import made_times as _made

_POOL_BYTES = 4096
_POOL_TEXT = _POOL_BYTES // 16 * 36
_TEMPLATE = b"00000000-0000-4000-8000-000000000000"
"""An id's text: the version digit (4) is the template's; every other digit is random."""
_PLACES = tuple(
    (digit, digit + (digit >= 8) + (digit >= 12) + (digit >= 16) + (digit >= 20))
    for digit in range(32)
    if digit != 12
)
"""Where each random hex digit of 16 bytes goes in an id's text (past its dashes)."""
_VARIANT = bytes.maketrans(b"0123456789abcdef", b"89ab89ab89ab89ab")
"""The digit after the third dash: its two high bits are RFC 9562's variant, ``10``."""
_THREE = tuple(f"{n:03d}" for n in range(1000))
"""Three digits of the microseconds, by their value."""
_LAST_THREE = tuple(f"{n:03d}+00:00" for n in range(1000))
"""The last three digits of the microseconds, and the time zone that follows them."""
_HEX = tuple(f"{n:02x}" for n in range(256))
"""A byte's two hex digits, by its value."""


class _Pool:
    __slots__ = ("at", "high", "ids", "millisecond", "stamp", "top")

    def __init__(self) -> None:
        self.ids = ""
        self.at = _POOL_TEXT
        self.millisecond = -1
        self.stamp = ""
        self.top = -1
        self.high = ""
        """The text of the time's 32 high bits (``top``), which change every 49 days."""

    def take(self) -> str:
        """A fresh random (version 4) UUID, as text: the next of the pool's ids."""
        at = self.at
        if at == _POOL_TEXT:
            self.refill()
            at = 0
        self.at = at + 36
        return self.ids[at : at + 36]

    def refill(self) -> None:
        """256 ids' text, from 4 KiB of random bytes."""
        digits = os.urandom(_POOL_BYTES).hex().encode()
        ids = bytearray(_TEMPLATE * (_POOL_BYTES // 16))
        for digit, place in _PLACES:
            ids[place::36] = digits[digit::32]
        ids[19::36] = ids[19::36].translate(_VARIANT)
        self.ids, self.at = ids.decode(), 0

    def reset(self) -> None:
        self.ids, self.at = "", _POOL_TEXT


_pool = _Pool()
os.register_at_fork(after_in_child=_pool.reset)


new_id = _pool.take
"""A fresh random (version 4) UUID, as text."""


def new_ordered_id() -> str:
    """A fresh time-ordered (version 7) UUID, as text: 48 bits of Unix time in
    milliseconds, then random bits from the same pool as ``new_id``.

    ``_Pool.take`` written out (a call less), and the id's tail sliced from the pool at
    once; a new millisecond's text joined from a table rather than formatted."""
    pool = _pool
    at = pool.at
    if at == _POOL_TEXT:
        pool.refill()
        at = 0
    pool.at = at + 36
    millisecond = time_ns() // 1_000_000
    if millisecond != pool.millisecond:
        pool.millisecond = millisecond
        top = millisecond >> 16
        if top != pool.top:
            pool.top, pool.high = top, f"{top:08x}-"
        pool.stamp = pool.high + _HEX[millisecond >> 8 & 0xFF] + _HEX[millisecond & 0xFF] + "-7"
    # after the version digit: "xxx-Vxxx-xxxxxxxxxxxx"
    return pool.stamp + pool.ids[at + 15 : at + 36]


_MADE_KEPT = 256
"""How many timestamps ``status_time`` finds without parsing: a status is filed as soon
as it is published, so the last few suffice."""


class _Clock:
    __slots__ = ("prefix", "second")

    def __init__(self) -> None:
        self.second = -1
        self.prefix = ""

    def turn(self, second: int) -> None:
        self.second = second
        self.prefix = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S.")


_clock = _Clock()


def now() -> str:
    """The current time as the ISO 8601 string A2A timestamps use (UTC, microseconds)."""
    return timestamp(time_ns() // 1000)


def timestamp(moment: int) -> str:
    """``now`` of an earlier moment: ``time.time_ns() // 1000`` then (epoch
    microseconds), kept as a number until (and unless) its text is needed."""
    clock = _clock
    second = moment // 1_000_000
    if second != clock.second:
        clock.turn(second)
    micro = moment - second * 1_000_000
    text = clock.prefix + _THREE[micro // 1000] + _LAST_THREE[micro % 1000]
    if len(_made) >= _MADE_KEPT:
        _made.clear()
    _made[text] = moment / 1_000_000  # what ``datetime.timestamp()`` gives for it
    return text
