"""Tests of ``parley._speedups``, and ``plain``, the switch the other tests use to run the
same checks on the plain path."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from parley._speedups import enabled, use


@contextmanager
def plain() -> Iterator[None]:
    """Every entry of ``parley._speedups`` declines while this lasts."""
    was = enabled()
    use(False)
    try:
        yield
    finally:
        use(was)
