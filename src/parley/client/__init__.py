"""The calling side of A2A: a ``Client`` over a tiny ``Transport`` protocol.

Sits on ``parley.protocol`` and ``parley.types``; the ``parley`` command sits on it.
``connect`` resolves a card, selects a transport (spec 5.6.3) and gives a ``Client``;
``Client`` has one method per operation; transports carry them over one binding each
(JSON-RPC here; REST and gRPC register in ``parley.client.transports``).
"""

from parley.client._auth import APIKeyAuth, CredentialProvider, CredentialsAuth, StaticCredentials
from parley.client._card import card_problems, card_urls, card_warnings, fetch_card, parse_card
from parley.client._card_verify import CardVerification, CardVerifier
from parley.client._client import Client, user_message
from parley.client._credentials import BasicAuth, ClientTLS, OAuth2ClientCredentials
from parley.client._errors import (
    AgentUnreachableError,
    CardError,
    ClientError,
    ClientTimeoutError,
    NotAnAgentError,
    StreamInterruptedError,
)
from parley.client._factory import (
    PROTOCOLS,
    ClientConfig,
    ClientFactory,
    connect,
    in_memory_http_client,
)
from parley.client._interceptors import BearerAuth, ClientCall, ClientInterceptor, ExtensionsHeader
from parley.client._jwks import AgentKeys, KeyNotFoundError
from parley.client._receiver import PushNotification, PushReceiver
from parley.client._results import decode_result, decode_result_json
from parley.client._selection import FallbackTransport, candidate_interfaces, transport_name
from parley.client._text import text_of
from parley.client._tracker import TaskTracker
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
from parley.client.transports import JSONRPCTransport, StreamingASGITransport

__all__ = [
    "PROTOCOLS",
    "APIKeyAuth",
    "AgentKeys",
    "AgentUnreachableError",
    "BasicAuth",
    "BearerAuth",
    "CardError",
    "CardVerification",
    "CardVerifier",
    "Client",
    "ClientCall",
    "ClientCallContext",
    "ClientConfig",
    "ClientError",
    "ClientFactory",
    "ClientInterceptor",
    "ClientTLS",
    "ClientTimeoutError",
    "CredentialProvider",
    "CredentialsAuth",
    "ExtensionsHeader",
    "FallbackTransport",
    "JSONRPCTransport",
    "KeyNotFoundError",
    "NotAnAgentError",
    "OAuth2ClientCredentials",
    "PushNotification",
    "PushReceiver",
    "StaticCredentials",
    "StreamInterruptedError",
    "StreamItem",
    "StreamingASGITransport",
    "TaskTracker",
    "Timeouts",
    "Transport",
    "TransportFactory",
    "candidate_interfaces",
    "card_problems",
    "card_urls",
    "card_warnings",
    "connect",
    "decode_result",
    "decode_result_json",
    "fetch_card",
    "in_memory_http_client",
    "parse_card",
    "register_transport",
    "registered_transports",
    "text_of",
    "transport_factory",
    "transport_name",
    "user_message",
]
