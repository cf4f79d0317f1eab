"""The memory store's sent messages (idempotent send): which task a message went to, and
the agent's direct reply to it.

Every dict here holds strings and bytes only, which the garbage collector does not track
(see ``_memory``): a message is keyed by one string made of its scope and message id
(``_key``), a reply is its wire JSON, and the keys of the messages sent to one task are
one string (``_join``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from parley.stores._protocols import SentMessage
from parley.types import Message


def _key(scope: str, message_id: str) -> str:
    """One string for a scope and message id, told apart whatever characters they hold."""
    return f"{len(scope)}:{scope}{message_id}"


def _join(keys: str | None, key: str) -> str:
    """``keys`` with ``key`` added: each key prefixed with its length, so none is split."""
    return f"{keys or ''}{len(key)}:{key}"


def _split(keys: str) -> list[str]:
    split, at = [], 0
    while at < len(keys):
        colon = keys.index(":", at)
        end = colon + 1 + int(keys[at:colon])
        split.append(keys[colon + 1 : end])
        at = end
    return split


class SentMessages:
    """The messages sent, by scope and message id."""

    def __init__(self) -> None:
        self._sent: dict[str, str] = {}
        """message key (``_key``) -> the task id it went to."""
        self._replies: dict[str, bytes] = {}
        """message key -> wire JSON of the agent's direct reply."""
        self._claimed: dict[str, float] = {}
        """message key -> when it was claimed (for expiry)."""
        self._sent_to: dict[str, str] = {}
        """task id -> the keys of the messages sent to it (``_join``)."""

    def find(self, scope: str, message_id: str) -> SentMessage | None:
        return self._found(_key(scope, message_id))

    def _found(self, key: str) -> SentMessage | None:
        task_id = self._sent.get(key)
        if task_id is None:
            return None
        reply = self._replies.get(key)
        return SentMessage(task_id, None if reply is None else Message.model_validate_json(reply))

    def claim(self, scope: str, message_id: str, task_id: str) -> SentMessage | None:
        key = _key(scope, message_id)
        earlier = self._found(key)
        if earlier is None:
            self._sent[key] = task_id
            self._sent_to[task_id] = _join(self._sent_to.get(task_id), key)
            self._claimed[key] = time.time()
        return earlier

    def release(self, scope: str, message_id: str) -> None:
        self._forget(_key(scope, message_id))

    def save_reply(self, scope: str, message_id: str, reply: Message) -> None:
        key = _key(scope, message_id)
        if key in self._sent:
            self._replies[key] = reply.to_json()

    def forget_task(self, task_id: str) -> None:
        """Forget every message sent to ``task_id``."""
        keys = self._sent_to.pop(task_id, None)
        for key in _split(keys) if keys else ():
            self._forget(key)

    def expire(self, ended: float, stored: Callable[[str], bool]) -> None:
        """Forget the claims made before ``ended`` that never led to a ``stored`` task
        (direct replies, runs that died early)."""
        for key, at in list(self._claimed.items()):
            task_id = self._sent[key]
            if at < ended and not stored(task_id):
                self._forget(key)
                self._sent_to.pop(task_id, None)

    def _forget(self, key: str) -> None:
        self._sent.pop(key, None)
        self._replies.pop(key, None)
        self._claimed.pop(key, None)
