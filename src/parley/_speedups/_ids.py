"""Ids and timestamps made cheaply: the server makes several per request.

``new_id`` gives version 4 UUIDs from the operating system's secure random source, read
4 KiB at a time rather than 16 bytes per id, and laid out as text 256 ids at a time by
a few slice assignments (each id is then one slice of that text); a forked child starts
a pool of its own, so two processes never hand out the same ids. ``new_ordered_id`` gives
version 7 UUIDs whose random tail comes from the same pool, the time's text made once
per millisecond. ``timestamp`` formats the date and time once per second and only the
microseconds per call (three digits at a time, from a table), and keeps the epoch
seconds of the text it made, where ``made_time`` finds them without parsing it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from time import time_ns

from parley._speedups import _switch

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


def new_id() -> str | None:
    """A fresh random (version 4) UUID, as text: the next of the pool's ids; ``None``
    when the seam is off."""
    return _pool.take() if _switch.on else None


def new_ordered_id() -> str | None:
    """A fresh time-ordered (version 7) UUID, as text: 48 bits of Unix time in
    milliseconds, then random bits from the same pool as ``new_id`` (the tail of its next
    id, after the version digit: ``xxx-Vxxx-xxxxxxxxxxxx``); ``None`` when the seam is
    off."""
    if not _switch.on:
        return None
    pool = _pool
    tail = pool.take()[15:]  # after the version digit
    millisecond = time_ns() // 1_000_000
    if millisecond != pool.millisecond:
        pool.millisecond = millisecond
        top = millisecond >> 16
        if top != pool.top:
            pool.top, pool.high = top, f"{top:08x}-"
        pool.stamp = pool.high + _HEX[millisecond >> 8 & 0xFF] + _HEX[millisecond & 0xFF] + "-7"
    return pool.stamp + tail


_MADE_KEPT = 256
"""How many timestamps ``made_time`` finds without parsing: a status is filed as soon
as it is published, so the last few suffice."""

_made: dict[str, float] = {}
"""Timestamps made lately, and the epoch seconds each parses to."""


class _Clock:
    __slots__ = ("prefix", "second")

    def __init__(self) -> None:
        self.second = -1
        self.prefix = ""

    def turn(self, second: int) -> None:
        self.second = second
        self.prefix = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S.")


_clock = _Clock()


def timestamp(moment: int) -> str | None:
    """The ISO 8601 text (UTC, microseconds) of ``moment``, epoch microseconds; ``None``
    when the seam is off."""
    if not _switch.on:
        return None
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


def made_time(stamp: str) -> float | None:
    """The epoch seconds of ``stamp`` if ``timestamp`` made it lately, else ``None``
    (always, when the seam is off)."""
    return _made.get(stamp) if _switch.on else None
