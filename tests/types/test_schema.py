"""Every wire model against the normative v0.3.0 JSON Schema (``a2a.json``).

Each case builds a model in Python with its optional fields filled, checks that
``to_wire()`` validates against the schema definition of the same name, that
``to_json()`` says the same thing, and that reading the wire form back gives the model.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from parley.types import (
    A2AModel,
    A2ARequest,
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    Artifact,
    AuthorizationCodeOAuthFlow,
    CancelTaskRequest,
    ClientCredentialsOAuthFlow,
    DataPart,
    DeleteTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigRequest,
    FilePart,
    FileWithBytes,
    FileWithUri,
    GetAuthenticatedExtendedCardRequest,
    GetTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    HTTPAuthSecurityScheme,
    ImplicitOAuthFlow,
    JSONRPCError,
    JSONRPCErrorResponse,
    JSONRPCSuccessResponse,
    ListTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigRequest,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    PasswordOAuthFlow,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Role,
    SecurityScheme,
    SendMessageRequest,
    SendStreamingMessageRequest,
    SetTaskPushNotificationConfigRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskResubscriptionRequest,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    TransportProtocol,
)
from tests.schema import schema_definition, validate_wire

META = {"trace": {"id": "abc", "depth": 2}}

TEXT = TextPart(text="hello", metadata=META)
FILE_BYTES = FileWithBytes(bytes="aGVsbG8=", mime_type="text/plain", name="hello.txt")
FILE_URI = FileWithUri(uri="https://example.com/a.png", mime_type="image/png", name="a.png")
DATA = DataPart(data={"answer": 42, "nested": {"list": [1, "two", None]}}, metadata=META)

MESSAGE = Message(
    message_id="msg-1",
    role=Role.user,
    parts=[TEXT, FilePart(file=FILE_BYTES, metadata=META), FilePart(file=FILE_URI), DATA],
    context_id="ctx-1",
    task_id="task-1",
    reference_task_ids=["task-0"],
    extensions=["https://example.com/ext/v1"],
    metadata=META,
)
AGENT_MESSAGE = Message(message_id="msg-2", role=Role.agent, parts=[TextPart(text="on it")])

STATUS = TaskStatus(
    state=TaskState.input_required, message=AGENT_MESSAGE, timestamp="2025-07-30T12:00:00Z"
)
ARTIFACT = Artifact(
    artifact_id="art-1",
    parts=[TEXT, DATA],
    name="result",
    description="The result.",
    extensions=["https://example.com/ext/v1"],
    metadata=META,
)
TASK = Task(
    id="task-1",
    context_id="ctx-1",
    status=STATUS,
    history=[MESSAGE, AGENT_MESSAGE],
    artifacts=[ARTIFACT],
    metadata=META,
)

SCOPES = {"read": "Read tasks", "write": "Send messages"}
AUTH_CODE_FLOW = AuthorizationCodeOAuthFlow(
    authorization_url="https://auth.example.com/authorize",
    token_url="https://auth.example.com/token",
    refresh_url="https://auth.example.com/refresh",
    scopes=SCOPES,
)
CLIENT_CREDENTIALS_FLOW = ClientCredentialsOAuthFlow(
    token_url="https://auth.example.com/token",
    refresh_url="https://auth.example.com/refresh",
    scopes=SCOPES,
)
IMPLICIT_FLOW = ImplicitOAuthFlow(
    authorization_url="https://auth.example.com/authorize",
    refresh_url="https://auth.example.com/refresh",
    scopes=SCOPES,
)
PASSWORD_FLOW = PasswordOAuthFlow(
    token_url="https://auth.example.com/token",
    refresh_url="https://auth.example.com/refresh",
    scopes={},
)
FLOWS = OAuthFlows(
    authorization_code=AUTH_CODE_FLOW,
    client_credentials=CLIENT_CREDENTIALS_FLOW,
    implicit=IMPLICIT_FLOW,
    password=PASSWORD_FLOW,
)

API_KEY = APIKeySecurityScheme(name="X-API-Key", in_="header", description="A key.")
HTTP_AUTH = HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT", description="JWT.")
OAUTH2 = OAuth2SecurityScheme(
    flows=FLOWS,
    oauth2_metadata_url="https://auth.example.com/.well-known/oauth-authorization-server",
    description="OAuth.",
)
OIDC = OpenIdConnectSecurityScheme(
    open_id_connect_url="https://auth.example.com/.well-known/openid-configuration",
    description="OIDC.",
)
MTLS = MutualTLSSecurityScheme(description="Client certificates.")
SECURITY_SCHEMES: dict[str, A2AModel] = {
    "apiKey": API_KEY,
    "bearer": HTTP_AUTH,
    "oauth": OAUTH2,
    "oidc": OIDC,
    "mtls": MTLS,
}

EXTENSION = AgentExtension(
    uri="https://example.com/ext/v1",
    description="An extension.",
    required=True,
    params={"level": 3},
)
SKILL = AgentSkill(
    id="recipes",
    name="Recipes",
    description="Finds recipes.",
    tags=["cooking"],
    examples=["I need a recipe for bread"],
    input_modes=["text/plain"],
    output_modes=["text/plain", "application/json"],
    security=[{"oauth": ["read"]}],
)
CAPABILITIES = AgentCapabilities(
    streaming=True, push_notifications=True, state_transition_history=False, extensions=[EXTENSION]
)
PROVIDER = AgentProvider(organization="Example", url="https://example.com")
CARD = AgentCard(
    name="Recipe Agent",
    description="Helps with recipes.",
    url="https://agent.example.com/a2a",
    version="1.0.0",
    capabilities=CAPABILITIES,
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[SKILL],
    preferred_transport=TransportProtocol.jsonrpc,
    additional_interfaces=[
        AgentInterface(url="https://agent.example.com/a2a", transport=TransportProtocol.jsonrpc),
        AgentInterface(url="https://agent.example.com/grpc", transport=TransportProtocol.grpc),
        AgentInterface(url="https://agent.example.com/v1", transport=TransportProtocol.http_json),
    ],
    provider=PROVIDER,
    icon_url="https://agent.example.com/icon.png",
    documentation_url="https://agent.example.com/docs",
    security_schemes={
        "apiKey": API_KEY,
        "bearer": HTTP_AUTH,
        "oauth": OAUTH2,
        "oidc": OIDC,
        "mtls": MTLS,
    },
    security=[{"oauth": ["read"]}, {"apiKey": [], "mtls": []}],
    supports_authenticated_extended_card=True,
    signatures=[
        AgentCardSignature(
            protected="eyJhbGciOiJFUzI1NiJ9", signature="c2lnbmF0dXJl", header={"kid": "k1"}
        )
    ],
)

PUSH_CONFIG = PushNotificationConfig(
    url="https://client.example.com/hook",
    id="push-1",
    token="secret-token",
    authentication=PushNotificationAuthenticationInfo(schemes=["Bearer"], credentials="t0k"),
)
TASK_PUSH_CONFIG = TaskPushNotificationConfig(
    task_id="task-1", push_notification_config=PUSH_CONFIG
)

SEND_CONFIGURATION = MessageSendConfiguration(
    accepted_output_modes=["text/plain"],
    blocking=True,
    history_length=5,
    push_notification_config=PUSH_CONFIG,
)
SEND_PARAMS = MessageSendParams(message=MESSAGE, configuration=SEND_CONFIGURATION, metadata=META)
TASK_ID_PARAMS = TaskIdParams(id="task-1", metadata=META)
QUERY_PARAMS = TaskQueryParams(id="task-1", history_length=2, metadata=META)
GET_PUSH_PARAMS = GetTaskPushNotificationConfigParams(
    id="task-1", push_notification_config_id="push-1", metadata=META
)
LIST_PUSH_PARAMS = ListTaskPushNotificationConfigParams(id="task-1", metadata=META)
DELETE_PUSH_PARAMS = DeleteTaskPushNotificationConfigParams(
    id="task-1", push_notification_config_id="push-1", metadata=META
)

REQUESTS: list[A2AModel] = [
    SendMessageRequest(jsonrpc="2.0", id=1, params=SEND_PARAMS),
    SendStreamingMessageRequest(jsonrpc="2.0", id="req-2", params=SEND_PARAMS),
    GetTaskRequest(jsonrpc="2.0", id=3, params=QUERY_PARAMS),
    CancelTaskRequest(jsonrpc="2.0", id=4, params=TASK_ID_PARAMS),
    SetTaskPushNotificationConfigRequest(jsonrpc="2.0", id=5, params=TASK_PUSH_CONFIG),
    GetTaskPushNotificationConfigRequest(jsonrpc="2.0", id=6, params=GET_PUSH_PARAMS),
    ListTaskPushNotificationConfigRequest(jsonrpc="2.0", id=7, params=LIST_PUSH_PARAMS),
    DeleteTaskPushNotificationConfigRequest(jsonrpc="2.0", id=8, params=DELETE_PUSH_PARAMS),
    TaskResubscriptionRequest(jsonrpc="2.0", id=9, params=TASK_ID_PARAMS),
    GetAuthenticatedExtendedCardRequest(jsonrpc="2.0", id=10),
]

STATUS_EVENT = TaskStatusUpdateEvent(
    task_id="task-1", context_id="ctx-1", status=STATUS, final=True, metadata=META
)
ARTIFACT_EVENT = TaskArtifactUpdateEvent(
    task_id="task-1",
    context_id="ctx-1",
    artifact=ARTIFACT,
    append=True,
    last_chunk=False,
    metadata=META,
)

# (schema definition, instance): the instance's wire form must be a valid definition.
CASES: list[tuple[str, A2AModel]] = [
    ("TextPart", TEXT),
    ("FilePart", FilePart(file=FILE_BYTES, metadata=META)),
    ("FilePart", FilePart(file=FILE_URI)),
    ("FileWithBytes", FILE_BYTES),
    ("FileWithUri", FILE_URI),
    ("DataPart", DATA),
    ("Message", MESSAGE),
    ("Message", AGENT_MESSAGE),
    ("TaskStatus", STATUS),
    ("Artifact", ARTIFACT),
    ("Task", TASK),
    ("Task", Task(id="t", context_id="c", status=TaskStatus(state=TaskState.submitted))),
    ("TaskStatusUpdateEvent", STATUS_EVENT),
    ("TaskArtifactUpdateEvent", ARTIFACT_EVENT),
    ("AuthorizationCodeOAuthFlow", AUTH_CODE_FLOW),
    ("ClientCredentialsOAuthFlow", CLIENT_CREDENTIALS_FLOW),
    ("ImplicitOAuthFlow", IMPLICIT_FLOW),
    ("PasswordOAuthFlow", PASSWORD_FLOW),
    ("OAuthFlows", FLOWS),
    ("APIKeySecurityScheme", API_KEY),
    ("HTTPAuthSecurityScheme", HTTP_AUTH),
    ("OAuth2SecurityScheme", OAUTH2),
    ("OpenIdConnectSecurityScheme", OIDC),
    ("MutualTLSSecurityScheme", MTLS),
    ("AgentProvider", PROVIDER),
    ("AgentExtension", EXTENSION),
    ("AgentCapabilities", CAPABILITIES),
    ("AgentSkill", SKILL),
    ("AgentInterface", AgentInterface(url="https://a.example.com", transport="JSONRPC")),
    ("AgentCardSignature", AgentCardSignature(protected="e30", signature="c2ln")),
    ("AgentCard", CARD),
    ("PushNotificationAuthenticationInfo", PushNotificationAuthenticationInfo(schemes=["Basic"])),
    ("PushNotificationConfig", PUSH_CONFIG),
    ("PushNotificationConfig", PushNotificationConfig(url="https://client.example.com/hook")),
    ("TaskPushNotificationConfig", TASK_PUSH_CONFIG),
    ("MessageSendConfiguration", SEND_CONFIGURATION),
    ("MessageSendParams", SEND_PARAMS),
    ("TaskIdParams", TASK_ID_PARAMS),
    ("TaskQueryParams", QUERY_PARAMS),
    ("GetTaskPushNotificationConfigParams", GET_PUSH_PARAMS),
    ("ListTaskPushNotificationConfigParams", LIST_PUSH_PARAMS),
    ("DeleteTaskPushNotificationConfigParams", DELETE_PUSH_PARAMS),
    ("JSONRPCError", JSONRPCError(code=-32000, message="Oops", data={"detail": [1, 2]})),
    *((type(request).__name__, request) for request in REQUESTS),
    *(("A2ARequest", request) for request in REQUESTS),
    *(("SecurityScheme", scheme) for scheme in SECURITY_SCHEMES.values()),
    *(("TaskStatus", TaskStatus(state=state)) for state in TaskState),
]


def _case_id(case: tuple[str, A2AModel]) -> str:
    return case[0]


@pytest.mark.parametrize("case", CASES, ids=[_case_id(case) for case in CASES])
def test_wire_form_is_valid_and_round_trips(case: tuple[str, A2AModel]) -> None:
    definition, instance = case
    wire = instance.to_wire()

    validate_wire(definition, wire)
    assert json.loads(instance.to_json()) == wire
    assert type(instance).model_validate(wire) == instance
    assert type(instance).model_validate_json(instance.to_json()) == instance


def test_wire_names_are_camel_case() -> None:
    wire = CARD.to_wire()

    assert wire["protocolVersion"] == "0.3.0"
    assert wire["preferredTransport"] == "JSONRPC"
    assert wire["supportsAuthenticatedExtendedCard"] is True
    assert wire["securitySchemes"]["oauth"]["oauth2MetadataUrl"].startswith("https://")
    assert wire["securitySchemes"]["oidc"]["openIdConnectUrl"].startswith("https://")
    assert wire["securitySchemes"]["oauth"]["flows"]["authorizationCode"]["tokenUrl"]


def test_api_key_location_is_in_on_the_wire() -> None:
    """Spec 5.5.3: APIKeySecurityScheme names the key's location ``in``, a Python keyword."""
    wire = API_KEY.to_wire()

    assert wire["in"] == "header"
    assert "in_" not in wire
    assert b'"in_"' not in API_KEY.to_json()
    assert b'"in":"header"' in API_KEY.to_json()
    parsed = APIKeySecurityScheme.model_validate({"type": "apiKey", "name": "k", "in": "query"})
    assert parsed.in_ == "query"


def test_api_key_location_outside_the_enum_is_rejected() -> None:
    with pytest.raises(ValidationError):
        APIKeySecurityScheme.model_validate({"type": "apiKey", "name": "k", "in": "body"})


@pytest.mark.parametrize("name", sorted(SECURITY_SCHEMES))
def test_security_scheme_union_picks_the_class_by_type(name: str) -> None:
    scheme = SECURITY_SCHEMES[name]

    parsed = TypeAdapter(SecurityScheme).validate_python(scheme.to_wire())

    assert type(parsed) is type(scheme)
    assert parsed == scheme


def test_card_security_schemes_parse_into_their_classes() -> None:
    parsed = AgentCard.model_validate_json(CARD.to_json())

    assert parsed.security_schemes is not None
    assert {name: type(scheme) for name, scheme in parsed.security_schemes.items()} == {
        name: type(scheme) for name, scheme in SECURITY_SCHEMES.items()
    }


def test_card_defaults_follow_the_schema() -> None:
    card = AgentCard(
        name="a",
        description="b",
        url="https://a.example.com",
        version="1",
        capabilities=AgentCapabilities(),
        default_input_modes=[],
        default_output_modes=[],
        skills=[],
    )

    wire = card.to_wire()

    validate_wire("AgentCard", wire)
    assert wire["protocolVersion"] == "0.3.0"
    assert wire["preferredTransport"] == "JSONRPC"


def test_card_accepts_a_transport_the_spec_does_not_name() -> None:
    """Spec 5.5.5: transports beyond the three core ones may be declared."""
    interface = AgentInterface.model_validate({"url": "wss://a.example.com", "transport": "WS"})

    assert interface.transport == "WS"


@pytest.mark.parametrize(
    ("definition", "enum"),
    [("TaskState", TaskState), ("TransportProtocol", TransportProtocol)],
)
def test_enums_have_exactly_the_schema_values(definition: str, enum: Any) -> None:
    assert sorted(member.value for member in enum) == sorted(schema_definition(definition)["enum"])


def test_all_nine_task_states() -> None:
    """Spec 6.3."""
    assert len(TaskState) == 9
    for state in TaskState:
        validate_wire("TaskState", TaskStatus(state=state).to_wire()["state"])


@pytest.mark.parametrize("request_model", REQUESTS, ids=lambda r: type(r).__name__)
def test_a2a_request_union_dispatches_on_method(request_model: A2AModel) -> None:
    parsed = TypeAdapter(A2ARequest).validate_json(request_model.to_json())

    assert type(parsed) is type(request_model)
    assert parsed == request_model


def _request(**overrides: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}} | overrides


@pytest.mark.parametrize("request_id", ["abc", "", 0, 42, -7, None])
def test_request_id_may_be_string_number_or_null(request_id: object) -> None:
    """Spec 6.11.1 (JSON-RPC 2.0): the id is a String, Number or Null, echoed unchanged."""
    parsed = TypeAdapter(A2ARequest).validate_python(_request(id=request_id))

    assert parsed.id == request_id
    assert type(parsed.id) is type(request_id)
    assert parsed.to_wire()["id"] == request_id


@pytest.mark.parametrize("request_id", [{}, {"a": 1}, [1], True, 1.5])
def test_request_id_of_another_type_is_rejected(request_id: object) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(A2ARequest).validate_python(_request(id=request_id))


@pytest.mark.parametrize(
    "request_payload",
    [
        _request(jsonrpc="1.0"),
        {key: value for key, value in _request().items() if key != "jsonrpc"},
        _request(method="tasks/unknown"),
        {key: value for key, value in _request().items() if key != "method"},
        _request(params={}),
    ],
    ids=["wrong-version", "no-version", "unknown-method", "no-method", "params-without-id"],
)
def test_malformed_requests_are_rejected(request_payload: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(A2ARequest).validate_python(request_payload)


def test_unknown_fields_are_ignored_in_envelopes_and_params() -> None:
    parsed = TypeAdapter(A2ARequest).validate_python(
        _request(params={"id": "t", "futureField": 1}, futureEnvelopeField=True)
    )

    assert parsed == GetTaskRequest(jsonrpc="2.0", id=1, params=TaskQueryParams(id="t"))


def test_negative_history_length_is_left_to_the_handler() -> None:
    params = TaskQueryParams.model_validate({"id": "t", "historyLength": -1})

    assert params.history_length == -1


def test_extended_card_request_needs_no_params() -> None:
    wire = {"jsonrpc": "2.0", "id": "x", "method": "agent/getAuthenticatedExtendedCard"}

    parsed = TypeAdapter(A2ARequest).validate_python(wire)

    assert isinstance(parsed, GetAuthenticatedExtendedCardRequest)
    assert parsed.to_wire() == wire
    validate_wire("GetAuthenticatedExtendedCardRequest", parsed.to_wire())


# (schema definition, code, message, request id); the id is null where the request was unreadable.
ERROR_RESPONSES: list[tuple[str, int, str, str | int | None]] = [
    ("JSONParseError", -32700, "Invalid JSON payload", None),
    ("InvalidRequestError", -32600, "Request payload validation error", None),
    ("MethodNotFoundError", -32601, "Method not found", 1),
    ("InvalidParamsError", -32602, "Invalid parameters", 2),
    ("InternalError", -32603, "Internal error", "x"),
    ("TaskNotFoundError", -32001, "Task not found", 3),
    ("TaskNotCancelableError", -32002, "Task cannot be canceled", 4),
    ("PushNotificationNotSupportedError", -32003, "Push Notification is not supported", 5),
    ("UnsupportedOperationError", -32004, "This operation is not supported", 6),
    ("ContentTypeNotSupportedError", -32005, "Incompatible content types", 7),
    ("InvalidAgentResponseError", -32006, "Invalid agent response", 8),
    (
        "AuthenticatedExtendedCardNotConfiguredError",
        -32007,
        "Authenticated Extended Card is not configured",
        9,
    ),
]


@pytest.mark.parametrize(
    ("definition", "code", "message", "request_id"),
    ERROR_RESPONSES,
    ids=[e[0] for e in ERROR_RESPONSES],
)
def test_error_responses(
    definition: str, code: int, message: str, request_id: str | int | None
) -> None:
    """Spec 6.12 and 8: each A2A error object in its response envelope."""
    error = JSONRPCError(code=code, message=message, data={"detail": "why"})
    response = JSONRPCErrorResponse(id=request_id, error=error)

    wire = response.to_wire()

    validate_wire(definition, wire["error"])
    validate_wire("JSONRPCErrorResponse", wire)
    assert wire["id"] == request_id
    assert "id" in wire
    assert "result" not in wire
    assert JSONRPCErrorResponse.model_validate(wire) == response
    assert json.loads(response.to_json()) == wire


SUCCESS_RESPONSES: list[tuple[str, Any, Any]] = [
    ("SendMessageSuccessResponse", TASK, TASK.to_wire()),
    ("SendMessageSuccessResponse", AGENT_MESSAGE, AGENT_MESSAGE.to_wire()),
    ("SendStreamingMessageSuccessResponse", STATUS_EVENT, STATUS_EVENT.to_wire()),
    ("SendStreamingMessageSuccessResponse", ARTIFACT_EVENT, ARTIFACT_EVENT.to_wire()),
    ("GetTaskSuccessResponse", TASK, TASK.to_wire()),
    ("CancelTaskSuccessResponse", TASK, TASK.to_wire()),
    ("SetTaskPushNotificationConfigSuccessResponse", TASK_PUSH_CONFIG, TASK_PUSH_CONFIG.to_wire()),
    ("GetTaskPushNotificationConfigSuccessResponse", TASK_PUSH_CONFIG, TASK_PUSH_CONFIG.to_wire()),
    (
        "ListTaskPushNotificationConfigSuccessResponse",
        [TASK_PUSH_CONFIG],
        [TASK_PUSH_CONFIG.to_wire()],
    ),
    ("DeleteTaskPushNotificationConfigSuccessResponse", None, None),
    ("GetAuthenticatedExtendedCardSuccessResponse", CARD, CARD.to_wire()),
]


@pytest.mark.parametrize(
    ("definition", "result", "result_wire"),
    SUCCESS_RESPONSES,
    ids=[f"{s[0]}-{type(s[1]).__name__}" for s in SUCCESS_RESPONSES],
)
def test_success_responses(definition: str, result: Any, result_wire: Any) -> None:
    """Spec 6.11.2: ``result`` carries the method's result in wire form, even ``null``."""
    response = JSONRPCSuccessResponse(id="req-1", result=result)

    wire = response.to_wire()

    validate_wire(definition, wire)
    validate_wire("JSONRPCSuccessResponse", wire)
    assert wire == {"jsonrpc": "2.0", "id": "req-1", "result": result_wire}
    assert json.loads(response.to_json()) == wire
    assert JSONRPCSuccessResponse.model_validate(wire).to_wire() == wire


def test_null_id_is_kept_on_the_wire() -> None:
    """JSON-RPC 2.0: a response to an unreadable request carries ``"id": null``."""
    response = JSONRPCErrorResponse(id=None, error=JSONRPCError(code=-32700, message="Parse"))

    assert response.to_wire()["id"] is None
    assert json.loads(response.to_json())["id"] is None


def test_validate_wire_names_each_violation() -> None:
    payload = {"jsonrpc": "2.0", "id": {}, "method": "tasks/get", "params": {}}

    with pytest.raises(AssertionError) as failure:
        validate_wire("GetTaskRequest", payload)

    report = str(failure.value)
    assert "not a valid GetTaskRequest" in report
    assert "at id:" in report
    assert "at params: 'id' is a required property" in report
