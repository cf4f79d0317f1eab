"""The names parley records under: span names, attribute keys and metric instruments.

Where OpenTelemetry's A2A semantic-convention draft speaks (span names after the A2A
method, ``a2a.*`` attributes, ``gen_ai.conversation.id`` for the context id,
``error.type``), these are its names; the others are chosen in its spirit and listed in
docs/observability.md.
"""

from __future__ import annotations

METHODS: dict[str, str] = {
    "send_message": "SendMessage",
    "stream_message": "SendStreamingMessage",
    "get_task": "GetTask",
    "list_tasks": "ListTasks",
    "cancel_task": "CancelTask",
    "resubscribe": "SubscribeToTask",
    "set_push_config": "CreateTaskPushNotificationConfig",
    "get_push_config": "GetTaskPushNotificationConfig",
    "list_push_configs": "ListTaskPushNotificationConfigs",
    "delete_push_config": "DeleteTaskPushNotificationConfig",
    "get_extended_card": "GetExtendedAgentCard",
}
"""The request handler's operations (and the client's methods) -> the A2A method name
(v1.0's, whatever version the call speaks): the span name and ``a2a.method.name``."""

STREAMING = frozenset({"stream_message", "resubscribe"})
"""The operations that answer with a stream: their span lasts until the stream ends."""

# -- attributes (the draft's) ------------------------------------------------------------
METHOD = "a2a.method.name"
PROTOCOL_VERSION = "a2a.protocol.version"
TENANT = "a2a.tenant"
MESSAGE_ID = "a2a.message.id"
REFERENCE_TASK_IDS = "a2a.message.reference_task_ids"
TASK_ID = "a2a.task.id"
TASK_STATE = "a2a.task.state"
CONTEXT_ID = "gen_ai.conversation.id"
ERROR_TYPE = "error.type"
AGENT_NAME = "gen_ai.agent.name"
OPERATION_NAME = "gen_ai.operation.name"

# -- attributes (parley's, in the draft's spirit) ----------------------------------------
TRANSPORT = "a2a.transport"
"""The binding a call came in on, in the card's spelling: JSONRPC, HTTP+JSON, GRPC."""
PUSH_CONFIG_ID = "a2a.push.config.id"
PUSH_ATTEMPT = "a2a.push.attempt"
PUSH_OUTCOME = "a2a.push.outcome"
HTTP_STATUS = "http.response.status_code"
URL_FULL = "url.full"
STORE_BATCH_SIZE = "parley.store.batch.size"
STORE_EVENTS = "parley.store.events"
STORE_OPERATION = "parley.store.operation"
EVENTS_DROPPED = "parley.turn.events_dropped"
EVENT_SEQUENCE = "parley.event.sequence"
ARTIFACT_ID = "a2a.artifact.id"

# -- span names ----------------------------------------------------------------------------
TURN = "invoke_agent"
"""A turn of the agent's run (GenAI's agent invocation): ``invoke_agent {agent name}``."""
PUSH_DELIVERY = "a2a.push.deliver"
STORE_WRITE = "parley.store.write"
STORE_COMMIT = "parley.store.commit"
LEASE_TAKEOVER = "parley.lease.takeover"

# -- metric instruments ----------------------------------------------------------------
REQUEST_DURATION = "a2a.server.request.duration"
CLIENT_DURATION = "a2a.client.request.duration"
STATE_TRANSITIONS = "a2a.server.task.state_transitions"
ACTIVE_RUNS = "a2a.server.active_runs"
ACTIVE_STREAMS = "a2a.server.active_streams"
PUSH_BACKLOG = "a2a.server.push.backlog"
PUSH_DELIVERIES = "a2a.server.push.deliveries"
STORE_WRITE_DURATION = "parley.store.write.duration"
STORE_WRITE_BATCH = "parley.store.write.batch_size"
LEASE_TAKEOVERS = "parley.lease.takeovers"

MAX_TURN_EVENTS = 64
"""The span events one turn records; later ones are counted in ``EVENTS_DROPPED``."""


def task_state(value: str) -> str:
    """A task state as the draft spells it: ``input-required`` -> ``TASK_STATE_INPUT_REQUIRED``
    (v1.0's enum names); parley's ``unknown`` is ``TASK_STATE_UNSPECIFIED``."""
    if value == "unknown":
        return "TASK_STATE_UNSPECIFIED"
    return "TASK_STATE_" + value.upper().replace("-", "_")
