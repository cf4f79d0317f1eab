"""A2A v1.0 as a dialect at the edge: the ``lf.a2a.v1`` ProtoJSON and proto forms of the
core objects, its operation table and its errors (``google.rpc.Status``).

Part of the protocol layer, below the bindings and client transports of both versions,
which share these converters (through protobuf and googleapis-common-protos).
"""

from parley.protocol._cards import card_from_v1, card_to_v1, interfaces_of
from parley.protocol._errors import ConversionError
from parley.protocol.v1._card import card_json_v1
from parley.protocol.v1._data import event_from_v1, timestamp
from parley.protocol.v1._errors import (
    DOMAIN,
    STATUS_DETAILS_METADATA,
    error_from_status_details,
    error_from_status_json,
    error_info,
    grpc_details,
    jsonrpc_error,
    reason_of,
    rest_error_body,
    status_details,
)
from parley.protocol.v1._jsonrpc import DIALECT
from parley.protocol.v1._load import pb1
from parley.protocol.v1._operations import (
    BY_V1_JSONRPC_METHOD,
    BY_V1_NAME,
    V1_OPERATIONS,
    V1Operation,
    decode_request,
    decode_result,
    encode_json,
    encode_params,
    encode_result,
    to_proto,
)
from parley.protocol.v1._protojson import event_to_v1
from parley.protocol.v1._requests import tenant_of

__all__ = [
    "BY_V1_JSONRPC_METHOD",
    "BY_V1_NAME",
    "DIALECT",
    "DOMAIN",
    "STATUS_DETAILS_METADATA",
    "V1_OPERATIONS",
    "ConversionError",
    "V1Operation",
    "card_from_v1",
    "card_json_v1",
    "card_to_v1",
    "decode_request",
    "decode_result",
    "encode_json",
    "encode_params",
    "encode_result",
    "error_from_status_details",
    "error_from_status_json",
    "error_info",
    "event_from_v1",
    "event_to_v1",
    "grpc_details",
    "interfaces_of",
    "jsonrpc_error",
    "pb1",
    "reason_of",
    "rest_error_body",
    "status_details",
    "tenant_of",
    "timestamp",
    "to_proto",
]
