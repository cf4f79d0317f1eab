"""Pins the public names of ``parley.types``: adding or removing one is a decision."""

from __future__ import annotations

import parley.types


def test_public_names() -> None:
    assert sorted(parley.types.__all__) == [
        "A2AModel",
        "A2ARequest",
        "APIKeySecurityScheme",
        "AgentCapabilities",
        "AgentCard",
        "AgentCardSignature",
        "AgentExtension",
        "AgentInterface",
        "AgentProvider",
        "AgentSkill",
        "Artifact",
        "AuthorizationCodeOAuthFlow",
        "CancelTaskRequest",
        "ClientCredentialsOAuthFlow",
        "DataPart",
        "DeleteTaskPushNotificationConfigParams",
        "DeleteTaskPushNotificationConfigRequest",
        "Event",
        "FilePart",
        "FileWithBytes",
        "FileWithUri",
        "GetAuthenticatedExtendedCardRequest",
        "GetTaskPushNotificationConfigParams",
        "GetTaskPushNotificationConfigRequest",
        "GetTaskRequest",
        "HTTPAuthSecurityScheme",
        "ImplicitOAuthFlow",
        "JSONRPCError",
        "JSONRPCErrorResponse",
        "JSONRPCSuccessResponse",
        "ListTaskPushNotificationConfigParams",
        "ListTaskPushNotificationConfigRequest",
        "ListTasksParams",
        "ListTasksResult",
        "Message",
        "MessageSendConfiguration",
        "MessageSendParams",
        "MutualTLSSecurityScheme",
        "NamedTaskSendParams",
        "OAuth2SecurityScheme",
        "OAuthFlows",
        "OpenIdConnectSecurityScheme",
        "Part",
        "PasswordOAuthFlow",
        "ProtocolInterface",
        "PushNotificationAuthenticationInfo",
        "PushNotificationConfig",
        "Role",
        "SecurityScheme",
        "SendMessageRequest",
        "SendStreamingMessageRequest",
        "SetTaskPushNotificationConfigRequest",
        "Task",
        "TaskArtifactUpdateEvent",
        "TaskIdParams",
        "TaskPushNotificationConfig",
        "TaskQueryParams",
        "TaskResubscriptionRequest",
        "TaskState",
        "TaskStatus",
        "TaskStatusUpdateEvent",
        "TextPart",
        "TransportProtocol",
        "UpdateEvent",
    ]


def test_every_public_name_exists() -> None:
    for name in parley.types.__all__:
        assert getattr(parley.types, name) is not None, name
