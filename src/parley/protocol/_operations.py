"""The operation table: one row per A2A operation (spec 3.5.6, 7), in no version's names.

Every binding is driven by this table: the JSON-RPC dispatcher, the REST routes, the gRPC
servicer, the client's methods and the docs all iterate over ``OPERATIONS``. Adding an
operation is adding a row here and a method on the request handler.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from parley.protocol._v0_3 import V0_3_NAMES, V03Names
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
    params: type[A2AModel] | None
    """What the caller sends; ``None`` for an operation without parameters."""
    result: Any
    """What a call returns (a type or a union); for streams, the type of each event."""
    streaming: bool
    capability: Capability | None = None

    # v0.3's names of the operation, kept as views onto its table (``_v0_3``)

    @property
    def jsonrpc_method(self) -> str:
        return self._v0_3().jsonrpc_method

    @property
    def rest_method(self) -> str:
        return self._v0_3().rest_method

    @property
    def rest_path(self) -> str:
        return self._v0_3().rest_path

    @property
    def grpc_method(self) -> str:
        return self._v0_3().grpc_method

    def _v0_3(self) -> V03Names:
        names = V0_3_NAMES.get(self.name)
        if names is None:
            raise AttributeError(f"{self.name} is not an operation of A2A 0.3")
        return names


SEND_MESSAGE = Operation(
    name="send_message",
    params=MessageSendParams,
    result=Task | Message,
    streaming=False,
)
STREAM_MESSAGE = Operation(
    name="stream_message",
    params=MessageSendParams,
    result="Event",
    streaming=True,
    capability=Capability.streaming,
)
GET_TASK = Operation(
    name="get_task",
    params=TaskQueryParams,
    result=Task,
    streaming=False,
)
CANCEL_TASK = Operation(
    name="cancel_task",
    params=TaskIdParams,
    result=Task,
    streaming=False,
)
RESUBSCRIBE = Operation(
    name="resubscribe",
    params=TaskIdParams,
    result="Event",
    streaming=True,
    capability=Capability.streaming,
)
SET_PUSH_CONFIG = Operation(
    name="set_push_config",
    params=TaskPushNotificationConfig,
    result=TaskPushNotificationConfig,
    streaming=False,
    capability=Capability.push_notifications,
)
GET_PUSH_CONFIG = Operation(
    name="get_push_config",
    params=GetTaskPushNotificationConfigParams,
    result=TaskPushNotificationConfig,
    streaming=False,
    capability=Capability.push_notifications,
)
LIST_PUSH_CONFIGS = Operation(
    name="list_push_configs",
    params=ListTaskPushNotificationConfigParams,
    result=list[TaskPushNotificationConfig],
    streaming=False,
    capability=Capability.push_notifications,
)
DELETE_PUSH_CONFIG = Operation(
    name="delete_push_config",
    params=DeleteTaskPushNotificationConfigParams,
    result=None,
    streaming=False,
    capability=Capability.push_notifications,
)
GET_EXTENDED_CARD = Operation(
    name="get_extended_card",
    params=None,
    result=AgentCard,
    streaming=False,
    capability=Capability.extended_card,
)

LIST_TASKS = Operation(
    name="list_tasks",
    params=ListTasksParams,
    result=ListTasksResult,
    streaming=False,
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
