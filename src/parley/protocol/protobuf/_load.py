"""The one place parley imports protobuf and grpc, which come with ``parley[grpc]``."""

from __future__ import annotations

from types import ModuleType

_HINT = (
    "parley's gRPC and HTTP+JSON bindings need protobuf and grpcio, which are optional: "
    "install them with  pip install 'parley[grpc]'"
)

try:
    from google.protobuf import empty_pb2, json_format, struct_pb2, timestamp_pb2

    from parley._proto import a2a_pb2 as pb
except ImportError as error:  # pragma: no cover - the test environment has the extra
    raise ImportError(_HINT) from error


def load_grpc() -> ModuleType:
    """``grpc`` (with ``grpc.aio``), or an ``ImportError`` that says what to install."""
    try:
        import grpc
        import grpc.aio
    except ImportError as error:  # pragma: no cover - the test environment has the extra
        raise ImportError(_HINT) from error
    return grpc


__all__ = ["empty_pb2", "json_format", "load_grpc", "pb", "struct_pb2", "timestamp_pb2"]
