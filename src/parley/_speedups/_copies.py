"""Copies of wire models made past their generic steps."""

from __future__ import annotations

from parley._speedups import _switch
from parley.types import Message
from parley.types._base import made

_IDS = frozenset(("task_id", "context_id"))


def with_ids(message: Message, task_id: str, context_id: str) -> Message | None:
    """``message.copied(task_id=task_id, context_id=context_id)`` without the keywords'
    dict, its ``update`` and the view of its keys; ``None`` when the seam is off."""
    if not _switch.on:
        return None
    state = message.__dict__.copy()
    state["task_id"] = task_id
    state["context_id"] = context_id
    return made(type(message), state, message.__pydantic_fields_set__ | _IDS)
