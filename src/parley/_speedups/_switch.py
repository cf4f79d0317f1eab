"""Whether the entries of ``parley._speedups`` take their fast path (see there)."""

from __future__ import annotations

on = True
"""Set from ``PARLEY_SPEEDUPS`` at import; ``use`` changes it."""


def use(value: bool) -> None:
    """Take the fast paths (``True``) or let every entry decline (``False``)."""
    global on
    on = value


def enabled() -> bool:
    """Whether the fast paths are taken."""
    return on
