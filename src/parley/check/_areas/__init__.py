"""The checks, one module per area; importing this package registers them all."""

from parley.check._areas import _auth, _card, _envelope, _push, _stream, _tasks
from parley.check._model import CHECKS

AREAS = ("card", "envelope", "tasks", "bindings", "stream", "push", "auth")
"""The order the report and docs/check.md list the areas in."""

CHECKS.sort(key=lambda check: AREAS.index(check.area))

__all__ = ["AREAS", "_auth", "_card", "_envelope", "_push", "_stream", "_tasks"]
