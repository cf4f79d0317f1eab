"""Collector settings for a process that serves: ``tune_gc``.

CPython's cyclic garbage collector runs a young collection every 700 net allocations of
container objects, and a full one, over everything alive, every so often after that. A
server with a few dozen requests in flight crosses 700 constantly, and its full
collections walk every module, pydantic schema and object built at startup: measured on
the benchmark's echo agent at 64 connections, 60 full collections in 11 s took 0.9 s
between them, 22 ms the longest, and that pause was the p99 latency.

``tune_gc`` collects once, then freezes what is alive (``gc.freeze``: the startup objects
move to a generation no collection walks; they live as long as the process anyway) and
raises the young threshold to 10,000 and the middle one to 100. The app's lifespan calls
it once per process, after startup, unless the process has already set its own
collector settings.

The middle threshold: a young collection moves what is still alive, i.e. the requests in
flight, to the middle generation, and a middle collection walks all of it. With 500
streams in flight that is a pause of tens of milliseconds (35-65 ms measured) whatever
the threshold, and at CPython's 10 (one every 100,000 allocations) it took a fifth of a
SQLite stream's CPU; what those collections walk is mostly gone by reference counting
before the next, so a tenth as many of them walk about the same each, a tenth as often.
"""

from __future__ import annotations

import gc
import logging

logger = logging.getLogger("parley.server")

YOUNG_THRESHOLD = 10_000
MIDDLE_THRESHOLD = 100
_DEFAULT_THRESHOLD = (700, 10, 10)


def tune_gc() -> bool:
    """Tune the collector for serving; ``False`` (and nothing changed) when the process
    was tuned already, by this or by its own settings."""
    if gc.get_freeze_count() or gc.get_threshold() != _DEFAULT_THRESHOLD:
        return False
    gc.collect()
    gc.freeze()
    old = gc.get_threshold()[2]
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, old)
    logger.info(
        "parley tuned the garbage collector for serving (gc.freeze after startup, "
        "thresholds %d and %d); create_app(tune_gc=False) leaves it alone",
        YOUNG_THRESHOLD,
        MIDDLE_THRESHOLD,
    )
    return True
