"""Pure protocol knowledge of A2A v0.3.0, no I/O.

Sits on ``parley.types`` and below everything else: the operation table that drives
every binding, the task state machine, the reducer that folds events into a task (used
by the server and the client alike), the error tree, and the JSON-RPC dialects (v0.3 and
the 2025-early dialect in ``parley.protocol.early``) with the rule that tells them apart.
"""

from parley._speedups import read_models_plainly
from parley.protocol._dialect import V0_3, Dialect, DialectMethod, TaskLookup
from parley.protocol._dialects import (
    DEFAULT_DIALECT,
    DIALECTS,
    DIALECTS_BY_NAME,
    SHARED_METHODS,
    dialect_for_version,
    recognise,
)
from parley.protocol._errors import (
    ERROR_CLASSES,
    A2AError,
    AuthenticatedExtendedCardNotConfiguredError,
    ContentTypeNotSupportedError,
    ConversionError,
    ExtensionSupportRequiredError,
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
    VersionNotSupportedError,
)
from parley.protocol._operations import (
    BY_GRPC_METHOD,
    BY_JSONRPC_METHOD,
    BY_NAME,
    LIST_TASKS,
    OPERATIONS,
    Capability,
    Operation,
)
from parley.protocol._reducer import add_to_history, apply, copy_task
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
from parley.protocol._versions import (
    SUPPORTED_VERSIONS,
    VERSION_HEADER,
    major_minor,
    requested_version,
)

read_models_plainly()  # the wire models, made by now, read faster (parley._speedups)

__all__ = [
    "ACTIVE_STATES",
    "BY_GRPC_METHOD",
    "BY_JSONRPC_METHOD",
    "BY_NAME",
    "DEFAULT_DIALECT",
    "DIALECTS",
    "DIALECTS_BY_NAME",
    "ERROR_CLASSES",
    "INTERRUPTED_STATES",
    "LIST_TASKS",
    "OPERATIONS",
    "SHARED_METHODS",
    "SUPPORTED_VERSIONS",
    "TERMINAL_STATES",
    "V0_3",
    "VERSION_HEADER",
    "A2AError",
    "AuthenticatedExtendedCardNotConfiguredError",
    "Capability",
    "ContentTypeNotSupportedError",
    "ConversionError",
    "Dialect",
    "DialectMethod",
    "ExtensionSupportRequiredError",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONParseError",
    "MethodNotFoundError",
    "Operation",
    "PermissionDeniedError",
    "PushNotificationNotSupportedError",
    "TaskLookup",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "UnauthenticatedError",
    "UnsupportedOperationError",
    "VersionNotSupportedError",
    "add_to_history",
    "apply",
    "can_move",
    "copy_task",
    "dialect_for_version",
    "ends_interaction",
    "is_cancelable",
    "is_final",
    "is_interrupted",
    "is_terminal",
    "legal_moves",
    "major_minor",
    "recognise",
    "requested_version",
]
