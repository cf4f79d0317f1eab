"""Limits on what a caller may send, checked by the handler for every binding alike.

Ids are bounded and printable (a NUL reaches PostgreSQL as an error, a control character
a log line as a forged one), a message names a bounded number of tasks it refers to
(each costs a store read), and metadata is bounded in size and nesting. A request over
a limit is invalid params (-32602, HTTP 400, ``INVALID_ARGUMENT``), and the error names
the limit, never the caller's value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_json

from parley.protocol import InvalidParamsError
from parley.types import Message, MessageSendParams, TaskPushNotificationConfig

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Limits:
    """What one request may carry (see docs/security.md)."""

    max_id_length: int = 256
    """Task, context, message and push config ids."""
    max_reference_task_ids: int = 64
    """Tasks one message may refer to (``referenceTaskIds``)."""
    max_metadata_bytes: int = 64 * 1024
    """The JSON size of one ``metadata`` object (the request's, the message's)."""
    max_metadata_depth: int = 20
    """How deeply a ``metadata`` object may nest."""

    def check_id(self, field: str, value: str | None) -> None:
        if value is None:
            return
        if len(value) > self.max_id_length:
            raise InvalidParamsError(f"{field} is longer than {self.max_id_length} characters")
        # isprintable() (C) is false for every control character: the regex only
        # decides the rest (a non-printable character that is no control, e.g. U+2028)
        if not value.isprintable() and _UNPRINTABLE.search(value):
            raise InvalidParamsError(f"{field} contains a control character")

    def check_request(self, params: Any) -> None:
        """Every id and the metadata the params of an operation other than a send carry
        (``TaskIdParams``, ``TaskQueryParams``, ``ListTasksParams``, the push config
        params, ``TaskPushNotificationConfig``): each of those operations passes here
        first, so no store ever sees an id out of bounds."""
        for attribute, field in _ID_FIELDS:
            value = getattr(params, attribute, None)
            if value is not None:
                self.check_id(field, value)
        if isinstance(params, TaskPushNotificationConfig):
            self.check_id("pushNotificationConfig.id", params.push_notification_config.id)
        else:
            self.check_metadata("metadata", params.metadata)

    def check_metadata(self, field: str, metadata: dict[str, Any] | None) -> None:
        if not metadata:
            return
        if len(to_json(metadata)) > self.max_metadata_bytes:
            raise InvalidParamsError(
                f"{field} is larger than {self.max_metadata_bytes} bytes of JSON"
            )
        if _depth(metadata, self.max_metadata_depth + 1) > self.max_metadata_depth:
            raise InvalidParamsError(f"{field} nests deeper than {self.max_metadata_depth} levels")

    def check_message(self, params: MessageSendParams) -> None:
        message: Message = params.message
        # Every send passes here: what a message leaves out costs no call.
        self.check_id("message.messageId", message.message_id)
        if message.task_id is not None:
            self.check_id("message.taskId", message.task_id)
        if message.context_id is not None:
            self.check_id("message.contextId", message.context_id)
        references = message.reference_task_ids
        if references:
            if len(references) > self.max_reference_task_ids:
                raise InvalidParamsError(
                    f"message.referenceTaskIds names more than {self.max_reference_task_ids} tasks"
                )
            for reference in references:
                self.check_id("message.referenceTaskIds[]", reference)
        if params.metadata:
            self.check_metadata("metadata", params.metadata)
        if message.metadata:
            self.check_metadata("message.metadata", message.metadata)


def check_history_length(history_length: int | None) -> None:
    """Refuse a negative ``historyLength`` (``None``: the whole history)."""
    if history_length is not None and history_length < 0:
        raise InvalidParamsError(f"historyLength must be 0 or more, not {history_length}")


def _depth(value: Any, stop: int) -> int:
    """How deeply ``value`` nests, counted no further than ``stop``."""
    if stop <= 0 or not isinstance(value, dict | list):
        return 0
    children = value.values() if isinstance(value, dict) else value
    return 1 + max((_depth(child, stop - 1) for child in children), default=0)


_ID_FIELDS = (
    ("id", "id"),
    ("task_id", "taskId"),
    ("context_id", "contextId"),
    ("push_notification_config_id", "pushNotificationConfigId"),
)
"""The ids an operation's params may carry: attribute, and field as the wire names it."""

DEFAULT_LIMITS = Limits()
