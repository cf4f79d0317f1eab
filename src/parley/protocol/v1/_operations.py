"""The operation table of the v1.0 dialect: for each core operation its v1.0 JSON-RPC
method, HTTP+JSON verb and path, gRPC method and messages, and the conversions of its
params and result (v1.0.1 §5.3, §9.4, §10.4, §11.3).

Every v1.0 binding on both sides goes through ``decode_request`` (a request as ProtoJSON
or a proto message -> the core params model) and ``encode_result`` (a core result -> its
ProtoJSON dict); the client through ``encode_params`` and ``decode_result``. Requests are
read through the proto message, so ProtoJSON's rules (enum names or numbers, either field
spelling, timestamps) hold and a field of the wrong type is refused with its name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from parley.protocol._cards import card_from_v1, card_to_v1
from parley.protocol._errors import ConversionError
from parley.protocol._operations import BY_NAME, LIST_TASKS, OPERATIONS, Operation
from parley.protocol.protobuf._load import empty_pb2
from parley.protocol.v1._data import (
    Wire,
    _copy,
    event_from_v1,
    event_to_v1,
    message_from_v1,
    message_to_v1,
    push_config_from_v1,
    push_config_to_v1,
    state_from_v1,
    state_to_v1,
    task_from_v1,
    task_push_config_from_v1,
    task_push_config_to_v1,
    task_to_v1,
)
from parley.protocol.v1._load import json_format, pb1
from parley.types import Event, ListTasksResult

_EVENT = TypeAdapter[Any](Event)
_MAX_EXACT_INT = 2**53


@dataclass(frozen=True, slots=True)
class V1Operation:
    """One core operation as v1.0 spells it."""

    core: Operation
    jsonrpc_method: str
    rest_method: str
    rest_path: str
    """Without the ``/v1`` of v0.3; ``{id}`` and ``{config_id}`` are path parameters."""
    path_fields: tuple[tuple[str, str], ...]
    """Which request field each path parameter fills."""
    grpc_method: str
    request: Any
    response: Any
    params_from_v1: Callable[[Wire], Wire | None]
    """Request (ProtoJSON dict) -> the core params in wire form."""
    params_to_v1: Callable[[Wire], Wire]
    result_to_v1: Callable[[Any], Wire]
    """Core result in wire form (or ``None``, a list) -> response ProtoJSON dict."""
    result_from_v1: Callable[[Wire], Any]

    @property
    def name(self) -> str:
        return self.core.name


# -- params ------------------------------------------------------------------------------


def _send_from_v1(request: Wire) -> Wire:
    if not request.get("message"):
        raise ConversionError("SendMessageRequest needs a message")
    out: Wire = {"message": message_from_v1(request["message"])}
    out.update(_copy(request, "metadata"))
    config = request.get("configuration")
    if config is not None:
        core: Wire = _copy(config, "acceptedOutputModes", "historyLength")
        core["blocking"] = not config.get("returnImmediately", False)
        if config.get("taskPushNotificationConfig"):
            core["pushNotificationConfig"] = push_config_from_v1(
                config["taskPushNotificationConfig"]
            )
        out["configuration"] = core
    return out


def _send_to_v1(params: Wire) -> Wire:
    out: Wire = {"message": message_to_v1(params["message"])}
    out.update(_copy(params, "metadata"))
    config = params.get("configuration")
    if config is not None:
        v1: Wire = _copy(config, "acceptedOutputModes", "historyLength")
        if config.get("blocking") is False:
            v1["returnImmediately"] = True
        if config.get("pushNotificationConfig"):
            task_id = params["message"].get("taskId", "")
            v1["taskPushNotificationConfig"] = push_config_to_v1(
                task_id, config["pushNotificationConfig"]
            )
        out["configuration"] = v1
    return out


def _list_tasks_from_v1(request: Wire) -> Wire:
    out = _copy(
        request,
        "contextId",
        "pageSize",
        "pageToken",
        "historyLength",
        "includeArtifacts",
        "statusTimestampAfter",
        "tenant",
    )
    if request.get("status") and request["status"] != "TASK_STATE_UNSPECIFIED":
        out["status"] = state_from_v1(request["status"])
    return out


def _list_tasks_to_v1(params: Wire) -> Wire:
    out = _list_tasks_from_v1({key: value for key, value in params.items() if key != "status"})
    if params.get("status"):
        out["status"] = state_to_v1(params["status"])
    return out


def _list_result_to_v1(result: Wire) -> Wire:
    return {
        "tasks": [task_to_v1(task) for task in result["tasks"]],
        "nextPageToken": result.get("nextPageToken", ""),
        "pageSize": result["pageSize"],
        "totalSize": result["totalSize"],
    }


def _list_result_from_v1(result: Wire) -> ListTasksResult:
    return ListTasksResult.model_validate(
        {
            "tasks": [task_from_v1(task) for task in result.get("tasks", ())],
            "nextPageToken": result.get("nextPageToken", ""),
            "pageSize": result.get("pageSize", 0),
            "totalSize": result.get("totalSize", 0),
        }
    )


def _send_result_to_v1(result: Wire) -> Wire:
    if result.get("kind") == "message":
        return {"message": message_to_v1(result)}
    return {"task": task_to_v1(result)}


def _send_result_from_v1(result: Wire) -> Any:
    if "message" in result:
        return _EVENT.validate_python(message_from_v1(result["message"]))
    if "task" in result:
        return _EVENT.validate_python(task_from_v1(result["task"]))
    raise ConversionError("SendMessageResponse has neither a task nor a message")


def _task_id(request: Wire) -> Wire:
    return {"id": request.get("id", "")}


def _config_ids(request: Wire) -> Wire:
    return {"id": request.get("taskId", ""), "pushNotificationConfigId": request.get("id", "")}


def _config_ids_to_v1(params: Wire) -> Wire:
    return {"taskId": params["id"], "id": params.get("pushNotificationConfigId") or params["id"]}


def _model(operation: Operation) -> Callable[[Wire], Any]:
    adapter = TypeAdapter[Any](operation.result)
    return adapter.validate_python


# -- the table ---------------------------------------------------------------------------

_TASK_PATH = (("id", "id"),)
_CONFIG_PATH = (("id", "taskId"), ("config_id", "id"))


def _row(name: str, *args: Any, **kwargs: Any) -> V1Operation:
    core = LIST_TASKS if name == "list_tasks" else BY_NAME[name]
    return V1Operation(core, *args, **kwargs)


def _task_result() -> dict[str, Any]:
    return {
        "result_to_v1": task_to_v1,
        "result_from_v1": lambda data: _model(BY_NAME["get_task"])(task_from_v1(data)),
    }


def _event_result() -> dict[str, Any]:
    return {
        "result_to_v1": event_to_v1,
        "result_from_v1": lambda data: _EVENT.validate_python(event_from_v1(data)),
    }


def _config_result() -> dict[str, Any]:
    return {
        "result_to_v1": task_push_config_to_v1,
        "result_from_v1": lambda data: _model(BY_NAME["get_push_config"])(
            task_push_config_from_v1(data)
        ),
    }


def _send(name: str, method: str, path: str, response: Any, **results: Any) -> V1Operation:
    return _row(
        name,
        method,
        "POST",
        path,
        (),
        method,
        pb1.SendMessageRequest,
        response,
        _send_from_v1,
        _send_to_v1,
        **results,
    )


V1_OPERATIONS: tuple[V1Operation, ...] = (
    _send(
        "send_message",
        "SendMessage",
        "/message:send",
        pb1.SendMessageResponse,
        result_to_v1=_send_result_to_v1,
        result_from_v1=_send_result_from_v1,
    ),
    _send(
        "stream_message",
        "SendStreamingMessage",
        "/message:stream",
        pb1.StreamResponse,
        **_event_result(),
    ),
    _row(
        "get_task",
        "GetTask",
        "GET",
        "/tasks/{id}",
        _TASK_PATH,
        "GetTask",
        pb1.GetTaskRequest,
        pb1.Task,
        lambda r: {**_task_id(r), **_copy(r, "historyLength")},
        lambda p: {"id": p["id"], **_copy(p, "historyLength")},
        **_task_result(),
    ),
    _row(
        "list_tasks",
        "ListTasks",
        "GET",
        "/tasks",
        (),
        "ListTasks",
        pb1.ListTasksRequest,
        pb1.ListTasksResponse,
        _list_tasks_from_v1,
        _list_tasks_to_v1,
        _list_result_to_v1,
        _list_result_from_v1,
    ),
    _row(
        "cancel_task",
        "CancelTask",
        "POST",
        "/tasks/{id}:cancel",
        _TASK_PATH,
        "CancelTask",
        pb1.CancelTaskRequest,
        pb1.Task,
        lambda r: {**_task_id(r), **_copy(r, "metadata")},
        lambda p: {"id": p["id"], **_copy(p, "metadata")},
        **_task_result(),
    ),
    _row(
        "resubscribe",
        "SubscribeToTask",
        "GET",
        "/tasks/{id}:subscribe",
        _TASK_PATH,
        "SubscribeToTask",
        pb1.SubscribeToTaskRequest,
        pb1.StreamResponse,
        _task_id,
        lambda p: {"id": p["id"]},
        **_event_result(),
    ),
    _row(
        "set_push_config",
        "CreateTaskPushNotificationConfig",
        "POST",
        "/tasks/{id}/pushNotificationConfigs",
        (("id", "taskId"),),
        "CreateTaskPushNotificationConfig",
        pb1.TaskPushNotificationConfig,
        pb1.TaskPushNotificationConfig,
        task_push_config_from_v1,
        task_push_config_to_v1,
        **_config_result(),
    ),
    _row(
        "get_push_config",
        "GetTaskPushNotificationConfig",
        "GET",
        "/tasks/{id}/pushNotificationConfigs/{config_id}",
        _CONFIG_PATH,
        "GetTaskPushNotificationConfig",
        pb1.GetTaskPushNotificationConfigRequest,
        pb1.TaskPushNotificationConfig,
        _config_ids,
        _config_ids_to_v1,
        **_config_result(),
    ),
    _row(
        "list_push_configs",
        "ListTaskPushNotificationConfigs",
        "GET",
        "/tasks/{id}/pushNotificationConfigs",
        (("id", "taskId"),),
        "ListTaskPushNotificationConfigs",
        pb1.ListTaskPushNotificationConfigsRequest,
        pb1.ListTaskPushNotificationConfigsResponse,
        lambda r: {"id": r.get("taskId", "")},
        lambda p: {"taskId": p["id"]},
        lambda result: {"configs": [task_push_config_to_v1(item) for item in result]},
        lambda data: [
            _model(BY_NAME["get_push_config"])(task_push_config_from_v1(item))
            for item in data.get("configs", ())
        ],
    ),
    _row(
        "delete_push_config",
        "DeleteTaskPushNotificationConfig",
        "DELETE",
        "/tasks/{id}/pushNotificationConfigs/{config_id}",
        _CONFIG_PATH,
        "DeleteTaskPushNotificationConfig",
        pb1.DeleteTaskPushNotificationConfigRequest,
        empty_pb2.Empty,
        _config_ids,
        _config_ids_to_v1,
        lambda _: {},
        lambda _: None,
    ),
    _row(
        "get_extended_card",
        "GetExtendedAgentCard",
        "GET",
        "/extendedAgentCard",
        (),
        "GetExtendedAgentCard",
        pb1.GetExtendedAgentCardRequest,
        pb1.AgentCard,
        lambda _: None,
        lambda _: {},
        card_to_v1,
        lambda data: _model(BY_NAME["get_extended_card"])(card_from_v1(data)),
    ),
)

BY_V1_NAME: dict[str, V1Operation] = {op.name: op for op in V1_OPERATIONS}
BY_V1_JSONRPC_METHOD: dict[str, V1Operation] = {op.jsonrpc_method: op for op in V1_OPERATIONS}

assert {op.name for op in OPERATIONS} | {LIST_TASKS.name} == set(BY_V1_NAME), (
    "an operation has no v1.0 form"
)


def plain(data: Any) -> Any:
    """ProtoJSON read back through a message, with the whole numbers of its Structs (which
    protobuf holds as doubles) as ints again; the A2A proto has no float fields."""
    if isinstance(data, dict):
        return {key: plain(value) for key, value in data.items()}
    if isinstance(data, list):
        return [plain(item) for item in data]
    if isinstance(data, float) and data.is_integer() and abs(data) <= _MAX_EXACT_INT:
        return int(data)
    return data


def _check_status_filter(request: Wire, message: Any) -> None:
    """ProtoJSON skips an enum name it does not know when unknown fields are ignored; for
    ListTasks' ``status`` that would list every task: refuse it instead."""
    given = request.get("status")
    if (
        given in (None, "", 0, "TASK_STATE_UNSPECIFIED")
        or "status" not in message.DESCRIPTOR.fields_by_name
    ):
        return
    if not message.status:
        raise ConversionError("status is not a TaskState name (TASK_STATE_WORKING, ...)")


def decode_request(operation: V1Operation, request: Any) -> Any:
    """The core params (a model, or ``None``) of a v1.0 request: a ProtoJSON dict, or the
    request proto message. Raises ``ConversionError`` for what does not fit the proto,
    pydantic's ``ValidationError`` for what does not fit the core."""
    if isinstance(request, dict):
        message = operation.request()
        try:
            json_format.ParseDict(request, message, ignore_unknown_fields=True)
        except json_format.ParseError as error:
            raise ConversionError(str(error)) from None
        _check_status_filter(request, message)
        request = message
    wire = operation.params_from_v1(plain(json_format.MessageToDict(request)))
    params = operation.core.params
    return None if params is None or wire is None else params.model_validate(wire)


def encode_result(operation: V1Operation, result: Any) -> Wire:
    """A core result (model, list of models or ``None``) as the response's ProtoJSON."""
    if isinstance(result, list):
        return operation.result_to_v1([item.to_wire() for item in result])
    return operation.result_to_v1(None if result is None else result.to_wire())


def encode_params(operation: V1Operation, params: Any) -> Wire:
    """Core params (a model or ``None``) as the v1.0 request's ProtoJSON (client side)."""
    return operation.params_to_v1({} if params is None else params.to_wire())


def decode_result(operation: V1Operation, data: Any) -> Any:
    """A v1.0 response (ProtoJSON dict or proto message) as the core result (client side).
    Raises ``ConversionError`` for what does not fit the proto or the core."""
    if isinstance(data, dict):
        message = operation.response()
        try:
            json_format.ParseDict(data, message, ignore_unknown_fields=True)
        except json_format.ParseError as error:
            raise ConversionError(str(error)) from None
        data = message
    return operation.result_from_v1(plain(json_format.MessageToDict(data)))


def to_proto(operation: V1Operation, data: Wire, *, request: bool = False) -> Any:
    """A ProtoJSON dict as the operation's response (or request) message, for gRPC."""
    message = (operation.request if request else operation.response)()
    json_format.ParseDict(data, message)
    return message
