"""The earlier JSON-RPC dialect of A2A (``"2025-early"``): ``tasks/send`` with the task
id the client chose, ``tasks/sendSubscribe``, ``type``-tagged parts, ``sessionId``.

Pure protocol knowledge like the rest of ``parley.protocol``: its wire shapes
(``_types``), the conversions to and from the core types that the server binding and the
client transport share (``_convert``), and its method table as a ``Dialect``
(``_dialect``). See docs/dialect-2025-early.md.
"""

from parley.protocol.early import _types as wire
from parley.protocol.early._convert import (
    PUSH_CONFIG_ID,
    STATE_FROM_EARLY,
    STATE_TO_EARLY,
    authentication_of,
    card_from_early,
    card_to_early,
    event_from_early,
    message_to_early,
    part_to_early,
    push_config_from_early,
    push_config_to_early,
    task_from_early,
    task_to_early,
)
from parley.protocol.early._dialect import (
    EARLY,
    GET_CARD,
    NAME,
    SessionNotFoundError,
    StreamEncoder,
    encode_error,
)

__all__ = [
    "EARLY",
    "GET_CARD",
    "NAME",
    "PUSH_CONFIG_ID",
    "STATE_FROM_EARLY",
    "STATE_TO_EARLY",
    "SessionNotFoundError",
    "StreamEncoder",
    "authentication_of",
    "card_from_early",
    "card_to_early",
    "encode_error",
    "event_from_early",
    "message_to_early",
    "part_to_early",
    "push_config_from_early",
    "push_config_to_early",
    "task_from_early",
    "task_to_early",
    "wire",
]
