"""v1.0's HTTP and gRPC statuses of the A2A errors (v1.0.1 §5.4), beside v0.3's (``_v0_3``).
v1.0's operation names are in ``parley.protocol.v1``, which needs protobuf; this table does
not, as every error class reads it (``v1_http_status``, ``v1_grpc_status``).
"""

from __future__ import annotations

V1_0_STATUSES: dict[int, tuple[int, str]] = {
    -32700: (400, "INVALID_ARGUMENT"),  # JSONParseError
    -32600: (400, "INVALID_ARGUMENT"),  # InvalidRequestError
    -32601: (404, "NOT_FOUND"),  # MethodNotFoundError
    -32602: (400, "INVALID_ARGUMENT"),  # InvalidParamsError
    -32603: (500, "INTERNAL"),  # InternalError
    -32001: (404, "NOT_FOUND"),  # TaskNotFoundError
    -32002: (400, "FAILED_PRECONDITION"),  # TaskNotCancelableError
    -32003: (400, "FAILED_PRECONDITION"),  # PushNotificationNotSupportedError
    -32004: (400, "FAILED_PRECONDITION"),  # UnsupportedOperationError
    -32005: (400, "INVALID_ARGUMENT"),  # ContentTypeNotSupportedError
    -32006: (500, "INTERNAL"),  # InvalidAgentResponseError
    -32007: (400, "FAILED_PRECONDITION"),  # AuthenticatedExtendedCardNotConfiguredError
    -32008: (400, "FAILED_PRECONDITION"),  # ExtensionSupportRequiredError
    -32009: (400, "FAILED_PRECONDITION"),  # VersionNotSupportedError
    -31401: (401, "UNAUTHENTICATED"),  # UnauthenticatedError
    -31403: (403, "PERMISSION_DENIED"),  # PermissionDeniedError
}
"""The HTTP status and gRPC status name of each A2A error in v1.0, by its JSON-RPC code."""
