"""The operation table: one row per A2A operation (spec 3.5.6, 7).

Every binding is driven by this table: the JSON-RPC dispatcher, the REST routes, the gRPC
servicer, the client's methods and the docs all iterate over ``OPERATIONS``. Adding an
operation is adding a row here and a method on the request handler.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from parley.types import (
    A2AModel,
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    ListTasksParams,
    ListTasksResult,
    Message,
    MessageSendParams,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
)

MAX_REQUEST_SIZE = 10 * 1024 * 1024
"""The largest request parley servers take by default on every binding (the HTTP body,
a gRPC message), and the largest a parley client sends over gRPC."""


class Capability(StrEnum):
    """What the agent card must declare for an operation to be served."""

    streaming = "streaming"
    push_notifications = "pushNotifications"
    extended_card = "supportsAuthenticatedExtendedCard"


@dataclass(frozen=True, slots=True)
class Operation:
    name: str
    """The request handler's method and the client's method for this operation."""
    jsonrpc_method: str
    params: type[A2AModel] | None
    """What the caller sends; ``None`` for an operation without parameters."""
    result: Any
    """What a call returns (a type or a union); for streams, the type of each event."""
    streaming: bool
    rest_method: str
    rest_path: str
    """Path template; ``{id}`` is the task id, ``{config_id}`` a push config id."""
    grpc_method: str
    capability: Capability | None = None


SEND_MESSAGE = Operation(
    name="send_message",
    jsonrpc_method="message/send",
    params=MessageSendParams,
    result=Task | Message,
    streaming=False,
    rest_method="POST",
    rest_path="/v1/message:send",
    grpc_method="SendMessage",
)
STREAM_MESSAGE = Operation(
    name="stream_message",
    jsonrpc_method="message/stream",
    params=MessageSendParams,
    result="Event",
    streaming=True,
    rest_method="POST",
    rest_path="/v1/message:stream",
    grpc_method="SendStreamingMessage",
    capability=Capability.streaming,
)
GET_TASK = Operation(
    name="get_task",
    jsonrpc_method="tasks/get",
    params=TaskQueryParams,
    result=Task,
    streaming=False,
    rest_method="GET",
    rest_path="/v1/tasks/{id}",
    grpc_method="GetTask",
)
CANCEL_TASK = Operation(
    name="cancel_task",
    jsonrpc_method="tasks/cancel",
    params=TaskIdParams,
    result=Task,
    streaming=False,
    rest_method="POST",
    rest_path="/v1/tasks/{id}:cancel",
    grpc_method="CancelTask",
)
RESUBSCRIBE = Operation(
    name="resubscribe",
    jsonrpc_method="tasks/resubscribe",
    params=TaskIdParams,
    result="Event",
    streaming=True,
    rest_method="POST",
    rest_path="/v1/tasks/{id}:subscribe",
    grpc_method="TaskSubscription",
    capability=Capability.streaming,
)
SET_PUSH_CONFIG = Operation(
    name="set_push_config",
    jsonrpc_method="tasks/pushNotificationConfig/set",
    params=TaskPushNotificationConfig,
    result=TaskPushNotificationConfig,
    streaming=False,
    rest_method="POST",
    rest_path="/v1/tasks/{id}/pushNotificationConfigs",
    grpc_method="CreateTaskPushNotificationConfig",
    capability=Capability.push_notifications,
)
GET_PUSH_CONFIG = Operation(
    name="get_push_config",
    jsonrpc_method="tasks/pushNotificationConfig/get",
    params=GetTaskPushNotificationConfigParams,
    result=TaskPushNotificationConfig,
    streaming=False,
    rest_method="GET",
    rest_path="/v1/tasks/{id}/pushNotificationConfigs/{config_id}",
    grpc_method="GetTaskPushNotificationConfig",
    capability=Capability.push_notifications,
)
LIST_PUSH_CONFIGS = Operation(
    name="list_push_configs",
    jsonrpc_method="tasks/pushNotificationConfig/list",
    params=ListTaskPushNotificationConfigParams,
    result=list[TaskPushNotificationConfig],
    streaming=False,
    rest_method="GET",
    rest_path="/v1/tasks/{id}/pushNotificationConfigs",
    grpc_method="ListTaskPushNotificationConfig",
    capability=Capability.push_notifications,
)
DELETE_PUSH_CONFIG = Operation(
    name="delete_push_config",
    jsonrpc_method="tasks/pushNotificationConfig/delete",
    params=DeleteTaskPushNotificationConfigParams,
    result=None,
    streaming=False,
    rest_method="DELETE",
    rest_path="/v1/tasks/{id}/pushNotificationConfigs/{config_id}",
    grpc_method="DeleteTaskPushNotificationConfig",
    capability=Capability.push_notifications,
)
GET_EXTENDED_CARD = Operation(
    name="get_extended_card",
    jsonrpc_method="agent/getAuthenticatedExtendedCard",
    params=None,
    result=AgentCard,
    streaming=False,
    rest_method="GET",
    rest_path="/v1/card",
    grpc_method="GetAgentCard",
    capability=Capability.extended_card,
)

LIST_TASKS = Operation(
    name="list_tasks",
    jsonrpc_method="tasks/list",
    params=ListTasksParams,
    result=ListTasksResult,
    streaming=False,
    rest_method="GET",
    rest_path="/v1/tasks",
    grpc_method="ListTasks",
)
"""v1.0's ``ListTasks``. Not in ``OPERATIONS``: v0.3 has it only as REST ``GET /v1/tasks``
(no JSON-RPC method, no RPC in its proto), which the REST binding serves on its own; the
v1.0 dialect's table (``parley.protocol.v1``) lists it with the others."""

OPERATIONS: tuple[Operation, ...] = (
    SEND_MESSAGE,
    STREAM_MESSAGE,
    GET_TASK,
    CANCEL_TASK,
    RESUBSCRIBE,
    SET_PUSH_CONFIG,
    GET_PUSH_CONFIG,
    LIST_PUSH_CONFIGS,
    DELETE_PUSH_CONFIG,
    GET_EXTENDED_CARD,
)

BY_JSONRPC_METHOD: dict[str, Operation] = {op.jsonrpc_method: op for op in OPERATIONS}
BY_GRPC_METHOD: dict[str, Operation] = {op.grpc_method: op for op in OPERATIONS}
BY_NAME: dict[str, Operation] = {op.name: op for op in OPERATIONS}
