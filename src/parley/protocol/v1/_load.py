"""The one place the v1.0 dialect imports protobuf: the ``lf.a2a.v1`` stubs and
``google.rpc`` (googleapis-common-protos), both dependencies of parley's core."""

from __future__ import annotations

from parley.protocol.protobuf._load import _HINT, json_format

try:
    from google.protobuf import any_pb2
    from google.rpc import error_details_pb2, status_pb2

    from parley._proto.v1 import a2a_v1_pb2 as pb1
except ImportError as error:  # pragma: no cover - the test environment has the extra
    raise ImportError(_HINT) from error

__all__ = ["any_pb2", "error_details_pb2", "json_format", "pb1", "status_pb2"]
