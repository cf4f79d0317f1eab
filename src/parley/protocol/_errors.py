"""The one error tree of parley.

Every A2A error is a class carrying its JSON-RPC code, its default message and its
``reason``; what each version answers it with over HTTP and gRPC is that version's table
(``_v0_3.V0_3_STATUSES``, ``_v1_0.V1_0_STATUSES``, by code), which the class attributes
``http_status``/``grpc_status`` (v0.3) and ``v1_http_status``/``v1_grpc_status`` (v1.0)
are views onto. Bindings and transports keep no mapping of their own. The tree, with
v0.3's statuses:

    A2AError
     +-- JSONParseError                              -32700  400  INVALID_ARGUMENT
     +-- InvalidRequestError                         -32600  400  INVALID_ARGUMENT
     +-- MethodNotFoundError                         -32601  404  UNIMPLEMENTED
     +-- InvalidParamsError                          -32602  400  INVALID_ARGUMENT
     +-- InternalError                               -32603  500  INTERNAL
     +-- TaskNotFoundError                           -32001  404  NOT_FOUND
     +-- TaskNotCancelableError                      -32002  409  FAILED_PRECONDITION
     +-- PushNotificationNotSupportedError           -32003  400  UNIMPLEMENTED
     +-- UnsupportedOperationError                   -32004  400  UNIMPLEMENTED
     +-- ContentTypeNotSupportedError                -32005  415  INVALID_ARGUMENT
     +-- InvalidAgentResponseError                   -32006  502  INTERNAL
     +-- AuthenticatedExtendedCardNotConfiguredError -32007  404  FAILED_PRECONDITION
     +-- ExtensionSupportRequiredError               -32008  400  FAILED_PRECONDITION
     +-- VersionNotSupportedError                    -32009  400  FAILED_PRECONDITION
     +-- UnauthenticatedError                        -31401  401  UNAUTHENTICATED
     +-- PermissionDeniedError                       -31403  403  PERMISSION_DENIED

The last two are not in the spec's table: spec 4.4 answers missing or refused
credentials with HTTP 401/403 at the transport; parley gives them codes in the
implementation-defined range so that a JSON-RPC body and a gRPC status can carry them
too, and a client rebuilds the same class from any binding.

``reason`` is the ``google.rpc.ErrorInfo`` reason of A2A v1.0 (v1.0.1 §3.3.2, §10.6: the
name in UPPER_SNAKE_CASE without "Error"). v1.0's statuses (v1.0.1 §5.4) differ from
v0.3's for a few classes (v0.3 keeps its own, e.g. 409 for a task that cannot be
canceled; v1.0 says 400 and FAILED_PRECONDITION).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ValidationError
from pydantic_core import to_json

from parley.protocol._v0_3 import V0_3_STATUSES
from parley.protocol._v1_0 import V1_0_STATUSES


class A2AError(Exception):
    """Base of every error parley raises or receives over the protocol.

    ``message`` is safe to show to the caller; ``data`` is optional structured detail.
    """

    code: ClassVar[int] = -32603
    default_message: ClassVar[str] = "Internal error"
    reason: ClassVar[str] = "INTERNAL"
    # each version's statuses: views onto the versions' tables (``_v0_3``, ``_v1_0``),
    # set below for every class of the tree
    http_status: ClassVar[int]
    grpc_status: ClassVar[str]
    v1_http_status: ClassVar[int]
    v1_grpc_status: ClassVar[str]

    def __init__(self, message: str | None = None, *, data: Any = None) -> None:
        self.message = _well_formed(message) if message else self.default_message
        self.data = data
        super().__init__(self.message)

    def body(self) -> bytes:
        """The one JSON body of an error on every binding: ``code``, ``message`` and
        ``data`` when there is any (the JSON-RPC ``error`` member, the HTTP+JSON error
        body, the gRPC ``a2a-error-bin`` trailer)."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            body["data"] = self.data
        return to_json(body)

    @classmethod
    def from_code(cls, code: int, message: str | None = None, data: Any = None) -> A2AError:
        """Rebuild the matching class from a wire code (unknown codes give ``A2AError``)."""
        error_class = _BY_CODE.get(code)
        if error_class is None:
            error = A2AError(message, data=data)
            error.code = code  # type: ignore[misc]
            return error
        return error_class(message, data=data)

    @classmethod
    def from_reason(
        cls, reason: str, message: str | None = None, data: Any = None
    ) -> A2AError | None:
        """The class named by a v1.0 ``ErrorInfo`` reason, or ``None`` if it names none."""
        error_class = _BY_REASON.get(reason)
        return None if error_class is None else error_class(message, data=data)

    @classmethod
    def from_grpc_status(cls, status: str) -> type[A2AError]:
        """The class parley uses for a gRPC status name that carried no A2A detail."""
        return _BY_GRPC_STATUS.get(status, InternalError)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class JSONParseError(A2AError):
    code = -32700
    default_message = "Invalid JSON payload"
    reason = "PARSE_ERROR"

    @classmethod
    def from_decode(cls, error: ValueError) -> JSONParseError:
        """The parse error for a body ``json.loads`` refused (``UnicodeDecodeError`` is a
        ``ValueError`` too): where it broke, never the body itself."""
        return cls(f"Invalid JSON payload: {error}")


class InvalidRequestError(A2AError):
    code = -32600
    default_message = "Request payload validation error"
    reason = "INVALID_REQUEST"


class MethodNotFoundError(A2AError):
    code = -32601
    default_message = "Method not found"
    reason = "METHOD_NOT_FOUND"


class InvalidParamsError(A2AError):
    code = -32602
    default_message = "Invalid parameters"
    reason = "INVALID_PARAMS"

    @classmethod
    def from_validation(cls, what: str, error: ValidationError) -> InvalidParamsError:
        """The error for input that failed validation: names each wrong field and why
        (at most five in the message, all in ``data``), never echoing the input."""
        problems = [
            {"field": ".".join(str(part) for part in item["loc"]) or "params", "error": item["msg"]}
            for item in error.errors(include_url=False, include_input=False)
        ]
        summary = "; ".join(f"{p['field']}: {p['error']}" for p in problems[:5])
        return cls(f"Invalid params for {what}: {summary}", data=problems)

    @classmethod
    def too_deep(cls) -> InvalidParamsError:
        """The error for JSON nested deeper than a parser goes (spec 8.1: the request is
        well-formed, its content is not acceptable)."""
        return cls("The request's JSON nests too deeply")


def _well_formed(text: str) -> str:
    """``text`` as valid Unicode: a lone surrogate (which a message may quote from the
    caller's JSON, ``"\\ud800"``) becomes U+FFFD, so that every error writer can encode it."""
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def shorten(text: str, limit: int = 100) -> str:
    """``text`` cut to ``limit`` characters: an error message never echoes large input."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


class InternalError(A2AError):
    code = -32603
    default_message = "Internal error"
    reason = "INTERNAL"


class TaskNotFoundError(A2AError):
    code = -32001
    default_message = "Task not found"
    reason = "TASK_NOT_FOUND"


class TaskNotCancelableError(A2AError):
    code = -32002
    default_message = "Task cannot be canceled"
    reason = "TASK_NOT_CANCELABLE"


class PushNotificationNotSupportedError(A2AError):
    code = -32003
    default_message = "Push Notification is not supported"
    reason = "PUSH_NOTIFICATION_NOT_SUPPORTED"


class UnsupportedOperationError(A2AError):
    code = -32004
    default_message = "This operation is not supported"
    reason = "UNSUPPORTED_OPERATION"


class ContentTypeNotSupportedError(A2AError):
    code = -32005
    default_message = "Incompatible content types"
    reason = "CONTENT_TYPE_NOT_SUPPORTED"


class InvalidAgentResponseError(A2AError):
    code = -32006
    default_message = "Invalid agent response type"
    reason = "INVALID_AGENT_RESPONSE"


class AuthenticatedExtendedCardNotConfiguredError(A2AError):
    code = -32007
    default_message = "Authenticated Extended Card not configured"
    reason = "EXTENDED_AGENT_CARD_NOT_CONFIGURED"


class ExtensionSupportRequiredError(A2AError):
    code = -32008
    default_message = "The agent requires an extension the request did not declare"
    reason = "EXTENSION_SUPPORT_REQUIRED"


class VersionNotSupportedError(A2AError):
    """The ``A2A-Version`` a request names is not one this agent speaks (v1.0.1 3.6.2)."""

    code = -32009
    default_message = "This A2A version is not supported"
    reason = "VERSION_NOT_SUPPORTED"


class UnauthenticatedError(A2AError):
    code = -31401
    default_message = "Authentication required"
    reason = "UNAUTHENTICATED"


class PermissionDeniedError(A2AError):
    code = -31403
    default_message = "Permission denied"
    reason = "PERMISSION_DENIED"


class ConversionError(ValueError):
    """A protobuf message that does not map onto parley's types (a required field
    missing, a resource name of the wrong shape). Not an A2A error itself: the server
    answers it with ``InvalidParamsError``, the client with ``InvalidAgentResponseError``.
    """


ERROR_CLASSES: tuple[type[A2AError], ...] = (
    JSONParseError,
    InvalidRequestError,
    MethodNotFoundError,
    InvalidParamsError,
    InternalError,
    TaskNotFoundError,
    TaskNotCancelableError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    ContentTypeNotSupportedError,
    InvalidAgentResponseError,
    AuthenticatedExtendedCardNotConfiguredError,
    ExtensionSupportRequiredError,
    VersionNotSupportedError,
    UnauthenticatedError,
    PermissionDeniedError,
)

_TREE: tuple[type[A2AError], ...] = (A2AError, *ERROR_CLASSES)
for _error in _TREE:
    _error.http_status, _error.grpc_status = V0_3_STATUSES[_error.code]
    _error.v1_http_status, _error.v1_grpc_status = V1_0_STATUSES[_error.code]

_BY_CODE: dict[int, type[A2AError]] = {error.code: error for error in ERROR_CLASSES}
_BY_REASON: dict[str, type[A2AError]] = {error.reason: error for error in ERROR_CLASSES}

# Without A2A detail in a gRPC status, the first class with that status is the best guess.
_BY_GRPC_STATUS: dict[str, type[A2AError]] = {}
for _error in reversed(ERROR_CLASSES):
    _BY_GRPC_STATUS[_error.grpc_status] = _error
_BY_GRPC_STATUS["INVALID_ARGUMENT"] = InvalidParamsError
_BY_GRPC_STATUS["UNIMPLEMENTED"] = UnsupportedOperationError
