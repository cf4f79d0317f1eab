"""The client transports, one per binding, registered under the card's transport names.

JSON-RPC is built in; REST (``HTTP+JSON``) and gRPC register themselves here too.
"""

from typing import Any

from parley._extras import absent
from parley.client._transport import Transport, register_transport
from parley.client.transports._asgi import StreamingASGITransport
from parley.client.transports._jsonrpc import JSONRPCTransport, create_jsonrpc_transport

register_transport("JSONRPC", create_jsonrpc_transport)


def _create_rest_transport(url: str, http_client: Any = None, **options: Any) -> Transport:
    from parley.client.transports._rest import create_rest_transport

    return create_rest_transport(url, http_client, **options)


def _create_grpc_transport(url: str, http_client: Any = None, **options: Any) -> Transport:
    from parley.client.transports._grpc import create_grpc_transport

    return create_grpc_transport(url, http_client, **options)


register_transport("HTTP+JSON", _create_rest_transport)
# gRPC needs the grpc extra (grpcio): without it, a card's gRPC interface is passed over
# for the others it offers.
if not absent("grpc"):
    register_transport("GRPC", _create_grpc_transport)

__all__ = ["JSONRPCTransport", "StreamingASGITransport"]
