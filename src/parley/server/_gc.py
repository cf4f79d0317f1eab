"""Collector settings for a process that serves: ``tune_gc``.

CPython's cyclic garbage collector runs a young collection every 700 net allocations of
container objects (2,000 on Python 3.13), and a full one, over everything alive, every
so often after that. A server with a few dozen requests in flight crosses that
constantly, and its full collections walk every module, pydantic schema and object
built at startup: each is a pause of every request in flight, and those pauses become
the tail of the latency.

``tune_gc`` collects once, then freezes what is alive (``gc.freeze``: the startup objects
move to a generation no collection walks; they live as long as the process anyway) and
raises the young threshold to 40,000 and the middle one to 100. The app's lifespan calls
it once per process, after startup, unless the process has already set its own
collector settings.

What a collection costs is what it finds alive: the requests in flight, each holding its
events until it is answered. A young collection walks what was made since the last one
and is alive, and moves it to the middle generation; a middle collection walks all of
that. So the young threshold is set above what a moderately busy server holds at once (a
SQLite stream waits for its commit holding a few hundred objects, so 50 streams hold more
than 10,000 but less than 40,000), and the middle one so that middle collections are
rare: with hundreds of streams in flight one walks all of them whatever the threshold,
and at CPython's 10 they would take a large share of a stream's CPU. What they walk is
mostly gone by reference counting before the next, so fewer collections walk about the
same each.

The young threshold then follows what the server holds (``_follow``). The young count
is the container objects made since the last collection less those freed since (never
below zero), so with no collection it is what was made since and is still alive: the
requests in flight. Where that is more than the threshold (500 streams hold well over
100,000 objects: a stream holds a few hundred while it waits for its commit, with its
connection), the count crosses the threshold in every wave of requests, and each
collection walks tens of thousands of live objects and frees nothing (parley's requests
leave no cycles: ``tests/server/test_gc_tuning.py``), all of it CPU taken from the
streams. So a young collection that freed less than a tenth
of the threshold doubles it, up to ``YOUNG_CEILING``; one that freed more than half
(garbage made faster than that: an agent's own cycles) halves it, down to 40,000 again,
which bounds the garbage held meanwhile.
"""

from __future__ import annotations

import gc
import logging
from typing import Any

logger = logging.getLogger("parley.server")

YOUNG_THRESHOLD = 40_000
YOUNG_CEILING = 16 * YOUNG_THRESHOLD
"""The young threshold ``_follow`` raises it to at most: above what 500 SQLite streams
hold alive (about 145,000), with room; one collection past it walks about as many."""
MIDDLE_THRESHOLD = 100
_DEFAULT_THRESHOLDS = ((700, 10, 10), (2000, 10, 10))
"""CPython's own: 3.11 and 3.12, then 3.13."""
_AT_IMPORT = (gc.get_threshold(), gc.get_freeze_count())
"""What the interpreter started with, as far as parley can tell: Python 3.12 starts
with a few hundred objects frozen already, so "none frozen" cannot mean untouched."""


def tune_gc() -> bool:
    """Tune the collector for serving; ``False`` (and nothing changed) when the process
    was tuned already, by this or by its own settings."""
    threshold = gc.get_threshold()
    # Fewer frozen than at import is no setting of the process's own: a frozen object
    # that dies leaves the frozen generation (on 3.12 and 3.13, imports after parley's
    # free a few), and only a freeze adds to it.
    if threshold not in _DEFAULT_THRESHOLDS or threshold != _AT_IMPORT[0]:
        return False
    if gc.get_freeze_count() > _AT_IMPORT[1]:
        return False
    gc.collect()
    gc.freeze()
    old = gc.get_threshold()[2]
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, old)
    gc.callbacks.append(_follow)
    logger.info(
        "parley tuned the garbage collector for serving (gc.freeze after startup, "
        "thresholds %d and %d); create_app(tune_gc=False) leaves it alone",
        YOUNG_THRESHOLD,
        MIDDLE_THRESHOLD,
    )
    return True


def _follow(phase: str, info: dict[str, Any]) -> None:
    """After a young collection: double the young threshold if it freed little (what
    crossed it was alive), halve it if it freed much (see the module's docstring)."""
    if phase != "stop" or info["generation"] != 0:
        return
    young, middle, old = gc.get_threshold()
    if not YOUNG_THRESHOLD <= young <= YOUNG_CEILING:
        return  # the process has set its own since
    freed = info["collected"]
    if freed < young // 10:
        young = min(2 * young, YOUNG_CEILING)
    elif freed > young // 2:
        young = max(young // 2, YOUNG_THRESHOLD)
    else:
        return
    gc.set_threshold(young, middle, old)
