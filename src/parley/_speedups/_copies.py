"""Copies of wire models made past their generic steps."""

from __future__ import annotations

from parley.types import Message
from parley.types._base import made

_IDS = frozenset(("task_id", "context_id"))


def message_with_ids(message: Message, task_id: str, context_id: str) -> Message:
    """``message.copied(task_id=task_id, context_id=context_id)`` without the keywords'
    dict, its ``update`` and the view of its keys."""
    state = message.__dict__.copy()
    state["task_id"] = task_id
    state["context_id"] = context_id
    return made(type(message), state, message.__pydantic_fields_set__ | _IDS)
