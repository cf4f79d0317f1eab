"""The public names of each package are a decision: adding one changes this test."""

from __future__ import annotations

import parley.protocol
import parley.server
import parley.server.push
import parley.stores
import parley.telemetry


def test_protocol_public_names() -> None:
    assert sorted(parley.protocol.__all__) == sorted(
        [
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
            "VERSION_HEADER",
            "ExtensionSupportRequiredError",
            "VersionNotSupportedError",
            "major_minor",
            "requested_version",
            "TERMINAL_STATES",
            "V0_3",
            "A2AError",
            "AuthenticatedExtendedCardNotConfiguredError",
            "Capability",
            "ContentTypeNotSupportedError",
            "ConversionError",
            "Dialect",
            "DialectMethod",
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
            "recognise",
        ]
    )


def test_server_public_names() -> None:
    assert sorted(parley.server.__all__) == sorted(
        [
            "A2AApp",
            "APIKeyVerifier",
            "AgentContext",
            "AgentExecutor",
            "AuthRequired",
            "Authenticator",
            "BasicVerifier",
            "ClientCertificateVerifier",
            "Credentials",
            "JWTVerifier",
            "MissingCredentials",
            "Principal",
            "SchemeVerifier",
            "TLSHTTPProtocol",
            "TokenVerifier",
            "Bus",
            "TrustedProxies",
            "CallContext",
            "CancelRefusingAgent",
            "CardError",
            "EventLog",
            "EventSink",
            "EventStream",
            "FunctionAgent",
            "GRPCOptions",
            "InputRequired",
            "RedisBus",
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
            "StoreInUseError",
            "StoredEvent",
            "TaskSnapshot",
            "TaskStore",
            "open_store",
        ]
    )


def test_server_push_public_names() -> None:
    assert sorted(parley.server.push.__all__) == sorted(
        [
            "GuardedTransport",
            "JWT_HEADER",
            "Outcome",
            "PushRetry",
            "PushSettings",
            "Resolver",
            "TOKEN_HEADER",
            "WebhookGuard",
            "WebhookRefused",
            "address_kind",
            "notification_headers",
            "post",
            "system_resolver",
        ]
    )
    for name in parley.server.push.__all__:
        assert hasattr(parley.server.push, name)


def test_check_public_names() -> None:
    import parley.check

    assert sorted(parley.check.__all__) == sorted(
        [
            "CHECKS", "Check", "Exchange", "Level", "Needs", "Report", "Result", "Scope",
            "Status", "as_json", "junit", "listing", "markdown", "run", "select", "summary",
            "text",
        ]
    )  # fmt: skip


def test_telemetry_public_names() -> None:
    assert sorted(parley.telemetry.__all__) == sorted(
        [
            "JSONFormatter",
            "Telemetry",
            "TraceContextFilter",
            "TracedCall",
            "TurnRecord",
            "configure_from_environment",
            "context_injector",
            "log_handler",
            "open_telemetry",
        ]
    )
    for name in parley.telemetry.__all__:
        assert getattr(parley.telemetry, name) is not None


def test_inspect_public_names() -> None:
    import parley.inspect

    assert sorted(parley.inspect.__all__) == ["InspectorApp", "create_inspector_app"]
    for name in parley.inspect.__all__:
        assert getattr(parley.inspect, name) is not None
