"""The client transports, one per binding, registered under the card's transport names.

JSON-RPC is built in; REST (``HTTP+JSON``) and gRPC register themselves here too.
"""

from parley.client._transport import register_transport
from parley.client.transports._asgi import StreamingASGITransport
from parley.client.transports._jsonrpc import JSONRPCTransport, create_jsonrpc_transport

register_transport("JSONRPC", create_jsonrpc_transport)

__all__ = ["JSONRPCTransport", "StreamingASGITransport"]
