"""v0.3's names for the core operations: its JSON-RPC methods, HTTP+JSON verbs and paths
and gRPC methods (spec 3.5.6, 7), one row per operation of the core table, beside v1.0's
(``parley.protocol.v1``) and 2025-early's (``parley.protocol.early``).

The core rows (``Operation``) carry no version's names; ``Operation.jsonrpc_method``,
``rest_method``, ``rest_path`` and ``grpc_method`` stay as views onto this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class V03Names:
    """One core operation as v0.3 spells it."""

    jsonrpc_method: str
    rest_method: str
    rest_path: str
    """Path template; ``{id}`` is the task id, ``{config_id}`` a push config id."""
    grpc_method: str


_CONFIGS = "/v1/tasks/{id}/pushNotificationConfigs"

V0_3_NAMES: dict[str, V03Names] = {
    "send_message": V03Names("message/send", "POST", "/v1/message:send", "SendMessage"),
    "stream_message": V03Names(
        "message/stream", "POST", "/v1/message:stream", "SendStreamingMessage"
    ),
    "get_task": V03Names("tasks/get", "GET", "/v1/tasks/{id}", "GetTask"),
    "cancel_task": V03Names("tasks/cancel", "POST", "/v1/tasks/{id}:cancel", "CancelTask"),
    "resubscribe": V03Names(
        "tasks/resubscribe", "POST", "/v1/tasks/{id}:subscribe", "TaskSubscription"
    ),
    "set_push_config": V03Names(
        "tasks/pushNotificationConfig/set",
        "POST",
        _CONFIGS,
        "CreateTaskPushNotificationConfig",
    ),
    "get_push_config": V03Names(
        "tasks/pushNotificationConfig/get",
        "GET",
        _CONFIGS + "/{config_id}",
        "GetTaskPushNotificationConfig",
    ),
    "list_push_configs": V03Names(
        "tasks/pushNotificationConfig/list", "GET", _CONFIGS, "ListTaskPushNotificationConfig"
    ),
    "delete_push_config": V03Names(
        "tasks/pushNotificationConfig/delete",
        "DELETE",
        _CONFIGS + "/{config_id}",
        "DeleteTaskPushNotificationConfig",
    ),
    "get_extended_card": V03Names(
        "agent/getAuthenticatedExtendedCard", "GET", "/v1/card", "GetAgentCard"
    ),
    # v0.3 has ListTasks only as REST ``GET /v1/tasks`` (no JSON-RPC method, no RPC in
    # its proto); the other two names are v1.0's, for what reads them off the core row
    "list_tasks": V03Names("tasks/list", "GET", "/v1/tasks", "ListTasks"),
}
"""v0.3's names of each core operation, by the operation's ``name``."""
