"""The public names of each package are a decision: adding one changes this test."""

from __future__ import annotations

import parley.protocol
import parley.server
import parley.stores


def test_protocol_public_names() -> None:
    assert sorted(parley.protocol.__all__) == sorted(
        [
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
    )


def test_server_public_names() -> None:
    assert sorted(parley.server.__all__) == sorted(
        [
            "A2AApp",
            "AgentContext",
            "AgentExecutor",
            "AuthRequired",
            "CallContext",
            "CancelRefusingAgent",
            "CardError",
            "EventLog",
            "EventSink",
            "EventStream",
            "FunctionAgent",
            "GRPCOptions",
            "InputRequired",
            "Rejected",
            "RequestContext",
            "RequestHandler",
            "ResumableAgent",
            "Retention",
            "SigningKey",
            "SigningKeys",
            "TaskUpdater",
            "agent",
            "create_app",
            "new_id",
            "text_message",
            "tune_gc",
        ]
    )


def test_stores_public_names() -> None:
    assert sorted(parley.stores.__all__) == sorted(
        [
            "Append",
            "EventStore",
            "Lease",
            "LeaseLostError",
            "LeaseStore",
            "MemoryStore",
            "OutboxEntry",
            "OutboxStore",
            "PushConfigStore",
            "SentMessage",
            "SentMessageStore",
            "Store",
            "StoredEvent",
            "TaskSnapshot",
            "TaskStore",
            "open_store",
        ]
    )
