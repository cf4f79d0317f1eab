"""The one place parley imports protobuf (a dependency of the core) and grpcio (the
``grpc`` extra, loaded on first use)."""

from __future__ import annotations

from types import ModuleType

from parley._extras import require

_HINT = "parley needs protobuf: pip install --force-reinstall parley-a2a"

try:
    from google.protobuf import empty_pb2, json_format, struct_pb2, timestamp_pb2

    from parley._proto import a2a_pb2 as pb
except ImportError as error:  # pragma: no cover - the test environment has the extra
    raise ImportError(_HINT) from error


def load_grpc() -> ModuleType:
    """``grpc`` (with ``grpc.aio``), or an ``ImportError`` that says what to install."""
    require("grpc", "the gRPC binding")
    import grpc
    import grpc.aio

    return grpc


__all__ = ["empty_pb2", "json_format", "load_grpc", "pb", "struct_pb2", "timestamp_pb2"]
