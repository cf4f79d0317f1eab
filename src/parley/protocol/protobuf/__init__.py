"""A2A in protobuf: converters between parley's types and the messages of ``a2a.proto``.

Part of the protocol layer, below the gRPC and HTTP+JSON bindings of both the server and
the client, which share these converters so that the two sides cannot drift. protobuf is
loaded in ``_load``; grpcio, which only the gRPC binding needs, comes with the ``grpc``
extra.
"""

from __future__ import annotations

import json
from typing import Any

from parley.protocol._errors import ConversionError
from parley.protocol.protobuf._card import card_from_proto, card_to_proto
from parley.protocol.protobuf._grpc import (
    ERROR_METADATA,
    FIRST_EVENT_METADATA,
    LAST_EVENT_METADATA,
    SERVICE,
    STATUS_DETAILS_METADATA,
    V1_SERVICE,
)
from parley.protocol.protobuf._load import json_format, load_grpc, pb
from parley.protocol.protobuf._operations import (
    PROTO_OPERATIONS,
    ProtoOperation,
    event_from_proto,
    event_to_proto,
)


def to_json(message: Any) -> bytes:
    """The proto-JSON of ``message`` (``json_name`` keys, defaults left out), on one line."""
    data = json_format.MessageToDict(message)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def from_json(data: bytes | str | dict[str, Any], message_class: Any) -> Any:
    """Parse proto-JSON into a new ``message_class``; unknown fields are ignored.

    Raises ``ConversionError`` saying what does not fit.
    """
    message = message_class()
    try:
        if isinstance(data, dict):
            json_format.ParseDict(data, message, ignore_unknown_fields=True)
        else:
            json_format.Parse(data, message, ignore_unknown_fields=True)
    except (json_format.ParseError, UnicodeDecodeError) as error:
        raise ConversionError(str(error)) from None
    except RecursionError:
        raise ConversionError("the JSON nests too deeply") from None
    return message


__all__ = [
    "ERROR_METADATA",
    "FIRST_EVENT_METADATA",
    "LAST_EVENT_METADATA",
    "PROTO_OPERATIONS",
    "SERVICE",
    "STATUS_DETAILS_METADATA",
    "V1_SERVICE",
    "ConversionError",
    "ProtoOperation",
    "card_from_proto",
    "card_to_proto",
    "event_from_proto",
    "event_to_proto",
    "from_json",
    "load_grpc",
    "pb",
    "to_json",
]
