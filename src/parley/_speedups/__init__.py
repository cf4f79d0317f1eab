"""Speed behind one seam: what parley does faster than the plain way because the
benchmark asked for it, not because the protocol does.

Everything here gives the same result as the plain code beside its caller, only sooner,
and each piece sits behind one narrow entry:

- ``encode_task(task, version)``: a task's wire JSON for a protocol version, or ``None``
  (decline: the caller serialises it the plain way). v0.3's writer and its kept JSON
  are ``_v03_json``, v1.0's ``_v1_json``.
- ``encode_chunk(event)``: a plain text chunk's v0.3 JSON, or ``None``; and
  ``built_text_chunk(...)``: a text chunk's event made without validating, or ``None``
  (``_chunks``; the plain way is ``types.text_chunk``, which validates).
- ``read_models_plainly()``: attribute reads and enum values of the wire models without
  pydantic's and ``Enum``'s Python-level hooks (``_getattr``), called once by
  ``parley.protocol``.
- ``new_id()``, ``new_ordered_id()``, ``timestamp(moment)``: version 4 and 7 UUIDs from a
  pool of random text, and timestamps formatted once per second (``_ids``), or ``None``;
  ``made_time(stamp)``: the epoch seconds of a timestamp made there lately, or ``None``
  (the plain way parses it).
- ``with_ids(message, task_id, context_id)``: a new task's message copied with its ids
  without the keywords' dict (``_copies``), or ``None``: the caller uses ``copied``.
- ``parley._speedups.jsonrpc``: a JSON-RPC request read from its bytes in one validation
  (``read_request``), or ``None``: the binding parses it and decodes it by its dialect.
- ``parley._speedups.memory``: the memory store's finished tasks packed into bytes, and
  its index of tasks for ListTasks (``pack`` / ``unpack`` a finished task; ``task_index``).

Layers: this package imports ``types``, ``protocol`` and ``stores`` (each module only
the layer it serves and below), and ``protocol``, ``stores`` and ``server`` call its
entries (tests/test_layers.py).

The switch: with ``PARLEY_SPEEDUPS=0`` in the environment every entry declines and the
plain path runs (the entries called on every request check it themselves rather than
through a wrapper here) (``read_models_plainly`` does nothing); ``use(False)`` does the same at
run time (the tests run the store contract and the JSON writers both ways). A record the
memory store packed stays readable after the switch, whichever way it is set.
"""

from __future__ import annotations

import os

from parley._speedups import _switch
from parley._speedups._chunks import built_text_chunk, encode_chunk
from parley._speedups._copies import with_ids
from parley._speedups._getattr import read_models_plainly
from parley._speedups._ids import made_time, new_id, new_ordered_id, timestamp
from parley._speedups._switch import enabled, use
from parley._speedups._v03_json import task_json
from parley._speedups._v1_json import NOT_WRITTEN, written_task
from parley.types import Task

__all__ = [
    "built_text_chunk",
    "enabled",
    "encode_chunk",
    "encode_task",
    "made_time",
    "new_id",
    "new_ordered_id",
    "read_models_plainly",
    "timestamp",
    "use",
    "with_ids",
]

_switch.on = os.environ.get("PARLEY_SPEEDUPS", "1") not in ("0", "false", "off", "no")


def encode_task(task: Task, version: str, head: str = "") -> bytes | None:
    """``task``'s wire JSON in protocol ``version`` (``"0.3"`` or ``"1.0"``), or ``None``:
    the caller writes it the plain way. v1.0's comes after ``head`` (the one-of that
    carries it, ``{"task":``, closed here too) and only for the commonest finished task;
    v0.3's for any ``Task`` (its kept JSON, or written)."""
    if not _switch.on or type(task) is not Task:
        return None
    if version == "0.3":
        return task_json(task)
    try:
        return written_task(task, head)
    except NOT_WRITTEN:  # a value the writer writes, or refuses, itself
        return None
