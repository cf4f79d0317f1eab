"""Hypothesis strategies for parley's wire types, limited to what a2a.proto can carry.

Values a protobuf binding cannot represent exactly (see ``parley.protocol.protobuf``:
part metadata, file names, ``referenceTaskIds``, ``""`` vs absent, ...) are left out, so
a round trip through protobuf must give back an equal object.
"""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf import timestamp_pb2
from hypothesis import strategies as st

from parley.types import (
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
    ClientCredentialsOAuthFlow,
    DataPart,
    DeleteTaskPushNotificationConfigParams,
    FilePart,
    FileWithBytes,
    FileWithUri,
    GetTaskPushNotificationConfigParams,
    HTTPAuthSecurityScheme,
    ImplicitOAuthFlow,
    ListTaskPushNotificationConfigParams,
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
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)


def built(model: Any, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``model`` built from exactly these fields (``st.builds`` would also draw the
    camelCase aliases pydantic puts in the signature)."""
    return st.fixed_dictionaries(fields).map(lambda values: model(**values))


ids = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
words = st.text(min_size=1, max_size=20)
maybe_words = st.none() | words
word_lists = st.lists(words, min_size=1, max_size=3)
maybe_word_lists = st.none() | word_lists

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
metadata = st.none() | objects


def _timestamp(seconds: int, nanos: int) -> str:
    return timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos).ToJsonString()


timestamps = st.none() | st.builds(
    _timestamp, st.integers(0, 4_000_000_000), st.integers(0, 999_999_999)
)

files = built(FileWithUri, uri=words, mime_type=maybe_words) | built(
    FileWithBytes,
    bytes=st.binary(max_size=30).map(lambda raw: base64.b64encode(raw).decode()),
    mime_type=maybe_words,
)
parts = st.one_of(
    built(TextPart, text=st.text(max_size=30)),
    built(DataPart, data=objects),
    built(FilePart, file=files),
)
messages = built(
    Message,
    message_id=ids,
    role=st.sampled_from(Role),
    parts=st.lists(parts, min_size=1, max_size=3),
    context_id=st.none() | ids,
    task_id=st.none() | ids,
    extensions=maybe_word_lists,
    metadata=metadata,
)
statuses = built(
    TaskStatus,
    state=st.sampled_from(TaskState),
    message=st.none() | messages,
    timestamp=timestamps,
)
artifacts = built(
    Artifact,
    artifact_id=ids,
    parts=st.lists(parts, min_size=1, max_size=2),
    name=maybe_words,
    description=maybe_words,
    extensions=maybe_word_lists,
    metadata=metadata,
)
tasks = built(
    Task,
    id=ids,
    context_id=ids,
    status=statuses,
    history=st.none() | st.lists(messages, min_size=1, max_size=2),
    artifacts=st.none() | st.lists(artifacts, min_size=1, max_size=2),
    metadata=metadata,
)
status_updates = built(
    TaskStatusUpdateEvent,
    task_id=ids,
    context_id=ids,
    status=statuses,
    final=st.booleans(),
    metadata=metadata,
)
artifact_updates = built(
    TaskArtifactUpdateEvent,
    task_id=ids,
    context_id=ids,
    artifact=artifacts,
    append=st.sampled_from([None, True]),
    last_chunk=st.sampled_from([None, True]),
    metadata=metadata,
)
events = st.one_of(tasks, messages, status_updates, artifact_updates)

push_configs = built(
    PushNotificationConfig,
    url=words,
    id=st.none() | ids,
    token=maybe_words,
    authentication=st.none()
    | built(
        PushNotificationAuthenticationInfo,
        schemes=st.lists(words, max_size=2),
        credentials=maybe_words,
    ),
)
task_push_configs = built(
    TaskPushNotificationConfig, task_id=ids, push_notification_config=push_configs
)

scopes = st.dictionaries(words, words, max_size=2)
_flow_kwargs: dict[str, Any] = {"scopes": scopes, "refresh_url": maybe_words}
flows = st.one_of(
    built(
        OAuthFlows,
        authorization_code=built(
            AuthorizationCodeOAuthFlow, authorization_url=words, token_url=words, **_flow_kwargs
        ),
    ),
    built(
        OAuthFlows,
        client_credentials=built(ClientCredentialsOAuthFlow, token_url=words, **_flow_kwargs),
    ),
    built(OAuthFlows, implicit=built(ImplicitOAuthFlow, authorization_url=words, **_flow_kwargs)),
    built(OAuthFlows, password=built(PasswordOAuthFlow, token_url=words, **_flow_kwargs)),
)
security_schemes = st.one_of(
    built(
        APIKeySecurityScheme,
        name=words,
        in_=st.sampled_from(["cookie", "header", "query"]),
        description=maybe_words,
    ),
    built(HTTPAuthSecurityScheme, scheme=words, bearer_format=maybe_words, description=maybe_words),
    built(
        OAuth2SecurityScheme, flows=flows, oauth2_metadata_url=maybe_words, description=maybe_words
    ),
    built(OpenIdConnectSecurityScheme, open_id_connect_url=words, description=maybe_words),
    built(MutualTLSSecurityScheme, description=maybe_words),
)
requirements = st.none() | st.lists(
    st.dictionaries(words, st.lists(words, max_size=2), min_size=1, max_size=2),
    min_size=1,
    max_size=2,
)
skills = built(
    AgentSkill,
    id=ids,
    name=words,
    description=words,
    tags=st.lists(words, max_size=2),
    examples=maybe_word_lists,
    input_modes=maybe_word_lists,
    output_modes=maybe_word_lists,
    security=requirements,
)
cards = built(
    AgentCard,
    name=words,
    description=words,
    url=words,
    version=words,
    protocol_version=words,
    preferred_transport=st.sampled_from(["JSONRPC", "GRPC", "HTTP+JSON"]),
    capabilities=built(
        AgentCapabilities,
        streaming=st.sampled_from([None, True]),
        push_notifications=st.sampled_from([None, True]),
        extensions=st.none()
        | st.lists(
            built(
                AgentExtension,
                uri=words,
                description=maybe_words,
                required=st.sampled_from([None, True]),
                params=metadata,
            ),
            min_size=1,
            max_size=2,
        ),
    ),
    default_input_modes=st.lists(words, max_size=2),
    default_output_modes=st.lists(words, max_size=2),
    skills=st.lists(skills, max_size=2),
    additional_interfaces=st.none()
    | st.lists(built(AgentInterface, url=words, transport=words), min_size=1, max_size=2),
    provider=st.none() | built(AgentProvider, organization=words, url=words),
    documentation_url=maybe_words,
    security_schemes=st.none() | st.dictionaries(words, security_schemes, min_size=1, max_size=2),
    security=requirements,
    supports_authenticated_extended_card=st.sampled_from([None, True]),
    signatures=st.none()
    | st.lists(
        built(AgentCardSignature, protected=words, signature=words, header=metadata),
        min_size=1,
        max_size=2,
    ),
)

send_params = built(
    MessageSendParams,
    message=messages,
    configuration=st.none()
    | built(
        MessageSendConfiguration,
        accepted_output_modes=maybe_word_lists,
        blocking=st.booleans(),
        history_length=st.none() | st.integers(1, 1000),
        push_notification_config=st.none() | push_configs,
    ),
    metadata=metadata,
)

PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "send_message": send_params,
    "stream_message": send_params,
    "get_task": built(TaskQueryParams, id=ids, history_length=st.none() | st.integers(1, 99)),
    "cancel_task": built(TaskIdParams, id=ids),
    "resubscribe": built(TaskIdParams, id=ids),
    "set_push_config": task_push_configs,
    # Always with a config id: gRPC carries only the resource name, where a missing id is
    # the task's own (parley.protocol.protobuf.push_config_id; tests/protocol covers it).
    "get_push_config": built(
        GetTaskPushNotificationConfigParams, id=ids, push_notification_config_id=ids
    ),
    "list_push_configs": built(ListTaskPushNotificationConfigParams, id=ids),
    "delete_push_config": built(
        DeleteTaskPushNotificationConfigParams, id=ids, push_notification_config_id=ids
    ),
    "get_extended_card": st.none(),
}
"""Params of each operation, by operation name."""

RESULTS: dict[str, st.SearchStrategy[Any]] = {
    "send_message": tasks | messages,
    "stream_message": events,
    "get_task": tasks,
    "cancel_task": tasks,
    "resubscribe": events,
    "set_push_config": task_push_configs,
    "get_push_config": task_push_configs,
    "list_push_configs": st.lists(task_push_configs, max_size=3),
    "delete_push_config": st.none(),
    "get_extended_card": cards,
}
"""Results (for a stream: one event) of each operation, by operation name."""
