"""Bindings: decode -> request handler -> encode, one per transport.

Sit on ``parley.server``'s request handler; driven by ``parley.protocol.OPERATIONS``.
No protocol decisions live in a binding.
"""

from parley.server.bindings._jsonrpc import JSONRPCBinding

__all__ = ["JSONRPCBinding"]
