"""The A2A v0.3.0 wire model: pydantic models of every object the protocol exchanges.

This is the layer below everything else in parley: it imports nothing of parley and does
no I/O. Fields are snake_case in Python and camelCase on the wire; ``to_wire()`` and
``to_json()`` give the protocol's spelling. Models check shape only; protocol rules (state
moves, error codes, range checks) live in ``parley.protocol`` and the request handler.
"""

from parley.types._base import A2AModel
from parley.types._card import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    TransportProtocol,
)
from parley.types._events import (
    Event,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
    UpdateEvent,
)
from parley.types._jsonrpc import (
    A2ARequest,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetAuthenticatedExtendedCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    JSONRPCError,
    JSONRPCErrorResponse,
    JSONRPCSuccessResponse,
    ListTaskPushNotificationConfigRequest,
    SendMessageRequest,
    SendStreamingMessageRequest,
    SetTaskPushNotificationConfigRequest,
    TaskResubscriptionRequest,
)
from parley.types._messages import Message, Role
from parley.types._params import (
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    MessageSendConfiguration,
    MessageSendParams,
    NamedTaskSendParams,
    TaskIdParams,
    TaskQueryParams,
)
from parley.types._parts import DataPart, FilePart, FileWithBytes, FileWithUri, Part, TextPart
from parley.types._push import (
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    TaskPushNotificationConfig,
)
from parley.types._security import (
    APIKeySecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    ImplicitOAuthFlow,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    PasswordOAuthFlow,
    SecurityScheme,
)
from parley.types._tasks import Artifact, Task, TaskState, TaskStatus

__all__ = [
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
