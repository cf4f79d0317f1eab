"""Pins the public names of ``parley.client``: adding or removing one is a decision."""

from __future__ import annotations

import parley.client


def test_public_names() -> None:
    assert sorted(parley.client.__all__) == [
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
        "PROTOCOLS",
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
    for name in parley.client.__all__:
        assert hasattr(parley.client, name)
