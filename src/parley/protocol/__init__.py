"""Pure protocol knowledge of A2A v0.3.0, no I/O.

Sits on ``parley.types`` and below everything else: the operation table that drives
every binding, the task state machine, the reducer that folds events into a task (used
by the server and the client alike), and the error tree.
"""

from parley.protocol._errors import (
    ERROR_CLASSES,
    A2AError,
    AuthenticatedExtendedCardNotConfiguredError,
    ContentTypeNotSupportedError,
    ConversionError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    MethodNotFoundError,
    PermissionDeniedError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnauthenticatedError,
    UnsupportedOperationError,
)
from parley.protocol._operations import (
    BY_GRPC_METHOD,
    BY_JSONRPC_METHOD,
    BY_NAME,
    OPERATIONS,
    Capability,
    Operation,
)
from parley.protocol._reducer import add_to_history, apply
from parley.protocol._states import (
    ACTIVE_STATES,
    INTERRUPTED_STATES,
    TERMINAL_STATES,
    can_move,
    ends_interaction,
    is_cancelable,
    is_final,
    is_interrupted,
    is_terminal,
    legal_moves,
)

__all__ = [
    "ACTIVE_STATES",
    "BY_GRPC_METHOD",
    "BY_JSONRPC_METHOD",
    "BY_NAME",
    "ERROR_CLASSES",
    "INTERRUPTED_STATES",
    "OPERATIONS",
    "TERMINAL_STATES",
    "A2AError",
    "AuthenticatedExtendedCardNotConfiguredError",
    "Capability",
    "ContentTypeNotSupportedError",
    "ConversionError",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONParseError",
    "MethodNotFoundError",
    "Operation",
    "PermissionDeniedError",
    "PushNotificationNotSupportedError",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "UnauthenticatedError",
    "UnsupportedOperationError",
    "add_to_history",
    "apply",
    "can_move",
    "ends_interaction",
    "is_cancelable",
    "is_final",
    "is_interrupted",
    "is_terminal",
    "legal_moves",
]
