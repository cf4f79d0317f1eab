"""The calling side of A2A: a ``Client`` over a tiny ``Transport`` protocol.

Sits on ``parley.protocol`` and ``parley.types`` (and uses ``parley.server`` only in the
in-memory transport, to type the app it calls). Above it: the ``parley`` command.
"""

from parley.client._errors import (
    AgentUnreachableError,
    CardError,
    ClientError,
    ClientTimeoutError,
    NotAnAgentError,
    StreamInterruptedError,
)
from parley.client._results import decode_result, decode_result_json
from parley.client._transport import (
    ClientCallContext,
    StreamItem,
    Timeouts,
    Transport,
    TransportFactory,
    register_transport,
    registered_transports,
    transport_factory,
)

__all__ = [
    "AgentUnreachableError",
    "CardError",
    "ClientCallContext",
    "ClientError",
    "ClientTimeoutError",
    "NotAnAgentError",
    "StreamInterruptedError",
    "StreamItem",
    "Timeouts",
    "Transport",
    "TransportFactory",
    "decode_result",
    "decode_result_json",
    "register_transport",
    "registered_transports",
    "transport_factory",
]
