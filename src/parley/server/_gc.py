"""Collector settings for a process that serves: ``tune_gc``.

CPython's cyclic garbage collector runs a young collection every 700 net allocations of
container objects, and a full one, over everything alive, every so often after that. A
server with a few dozen requests in flight crosses 700 constantly, and its full
collections walk every module, pydantic schema and object built at startup: measured on
the benchmark's echo agent at 64 connections, 60 full collections in 11 s took 0.9 s
between them, 22 ms the longest, and that pause was the p99 latency.

``tune_gc`` collects once, then freezes what is alive (``gc.freeze``: the startup objects
move to a generation no collection walks; they live as long as the process anyway) and
raises the young threshold to 10,000. The app's lifespan calls it once per process,
after startup, unless the process has already set its own collector settings.
"""

from __future__ import annotations

import gc
import logging

logger = logging.getLogger("parley.server")

YOUNG_THRESHOLD = 10_000
_DEFAULT_THRESHOLD = (700, 10, 10)


def tune_gc() -> bool:
    """Tune the collector for serving; ``False`` (and nothing changed) when the process
    was tuned already, by this or by its own settings."""
    if gc.get_freeze_count() or gc.get_threshold() != _DEFAULT_THRESHOLD:
        return False
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    logger.info(
        "parley tuned the garbage collector for serving (gc.freeze after startup, young "
        "threshold %d); create_app(tune_gc=False) leaves it alone",
        YOUNG_THRESHOLD,
    )
    return True
