"""The operation table of the v1.0 dialect: for each core operation its v1.0 JSON-RPC
method, HTTP+JSON verb and path, gRPC method and messages, and the conversions of its
params and result (v1.0.1 §5.3, §9.4, §10.4, §11.3).

Every v1.0 binding on both sides goes through ``decode_request`` (a request as ProtoJSON
or a proto message -> the core params model) and ``encode_result`` (a core result -> its
ProtoJSON dict); the client through ``encode_params`` and ``decode_result``. On the JSON
bindings requests are read as received (``_requests``: ProtoJSON's rules, no proto
message) and results built from the core objects, the hot path of v1.0; gRPC reads its
messages through the same readers and sends what ``to_proto`` makes of the results.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message as ProtoMessage
from pydantic import TypeAdapter, ValidationError
from pydantic_core import to_json

from parley.protocol._cards import card_from_v1
from parley.protocol._errors import ConversionError
from parley.protocol._operations import BY_NAME, LIST_TASKS, OPERATIONS, Operation
from parley.protocol.protobuf._load import empty_pb2
from parley.protocol.v1 import _requests as requests
from parley.protocol.v1._card import card_json_v1
from parley.protocol.v1._data import (
    Wire,
    _copy,
    event_from_v1,
    message_from_v1,
    push_config_to_v1,
    state_to_v1,
    task_from_v1,
    task_push_config_from_v1,
    task_push_config_to_v1,
)
from parley.protocol.v1._load import json_format, pb1
from parley.protocol.v1._protojson import SEND_PARAMS, event_json, event_to_v1, to_v1, to_v1_json
from parley.types import Event, ListTasksResult, MessageSendParams

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
    """Request (ProtoJSON as received) -> the core params in wire form."""
    params_to_v1: Callable[[Any], Wire]
    """Core params (a model, or ``None``) -> request ProtoJSON dict (client side)."""
    result_to_v1: Callable[[Any], Wire]
    """Core result (a model, a list of models, or ``None``) -> response ProtoJSON dict."""
    result_from_v1: Callable[[Wire], Any]
    result_json: Callable[[Any], bytes] | None = None
    """Core result -> response JSON, compiled (``_protojson``) for the hot results;
    ``None``: ``result_to_v1`` written as JSON."""

    @property
    def name(self) -> str:
        return self.core.name


# -- params ------------------------------------------------------------------------------


def _wired(convert: Callable[[Wire], Wire]) -> Callable[[Any], Wire]:
    """``convert`` of a model's wire form (a model, or ``None`` as ``{}``)."""
    return lambda model: convert({} if model is None else model.to_wire())


def _send_to_v1(model: MessageSendParams) -> Wire:
    out: Wire = {"message": to_v1(model.message)}
    params = model.to_wire()
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


def _list_tasks_to_v1(params: Wire) -> Wire:
    out = _copy(
        params,
        "contextId",
        "pageSize",
        "pageToken",
        "historyLength",
        "includeArtifacts",
        "statusTimestampAfter",
        "tenant",
    )
    if params.get("status"):
        out["status"] = state_to_v1(params["status"])
    return out


def _list_result_to_v1(result: ListTasksResult) -> Wire:
    return {
        "tasks": [to_v1(task) for task in result.tasks],
        "nextPageToken": result.next_page_token,
        "pageSize": result.page_size,
        "totalSize": result.total_size,
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


def _send_result_from_v1(result: Wire) -> Any:
    if "message" in result:
        return _EVENT.validate_python(message_from_v1(result["message"]))
    if "task" in result:
        return _EVENT.validate_python(task_from_v1(result["task"]))
    raise ConversionError("SendMessageResponse has neither a task nor a message")


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
        "result_to_v1": to_v1,
        "result_from_v1": lambda data: _model(BY_NAME["get_task"])(task_from_v1(data)),
        "result_json": to_v1_json,
    }


def _event_result() -> dict[str, Any]:
    return {
        "result_to_v1": event_to_v1,
        "result_from_v1": lambda data: _EVENT.validate_python(event_from_v1(data)),
        "result_json": event_json,
    }


def _config_result() -> dict[str, Any]:
    return {
        "result_to_v1": _wired(task_push_config_to_v1),
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
        requests.send_from_v1,
        _send_to_v1,
        **results,
    )


V1_OPERATIONS: tuple[V1Operation, ...] = (
    _send(
        "send_message",
        "SendMessage",
        "/message:send",
        pb1.SendMessageResponse,
        result_to_v1=event_to_v1,
        result_from_v1=_send_result_from_v1,
        result_json=event_json,
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
        requests.task_query,
        _wired(lambda p: {"id": p["id"], **_copy(p, "historyLength")}),
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
        requests.list_tasks_from_v1,
        _wired(_list_tasks_to_v1),
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
        requests.cancel,
        _wired(lambda p: {"id": p["id"], **_copy(p, "metadata")}),
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
        requests.task_id,
        _wired(lambda p: {"id": p["id"]}),
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
        _wired(task_push_config_to_v1),
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
        requests.config_ids,
        _wired(_config_ids_to_v1),
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
        requests.config_task,
        _wired(lambda p: {"taskId": p["id"]}),
        lambda result: {"configs": [task_push_config_to_v1(item.to_wire()) for item in result]},
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
        requests.config_ids,
        _wired(_config_ids_to_v1),
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
        lambda card: card_json_v1(card.to_wire()),
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


def decode_request(operation: V1Operation, request: Any) -> Any:
    """The core params (a model, or ``None``) of a v1.0 request: its ProtoJSON as parsed
    (read straight into the core's shapes, ``parley.protocol.v1._requests``) or the
    request proto message (gRPC). Raises ``ConversionError`` for what does not fit v1.0,
    pydantic's ``ValidationError`` for what does not fit the core."""
    if isinstance(request, ProtoMessage):
        try:
            request = plain(json_format.MessageToDict(request))
        except json_format.Error as error:  # held by protobuf, not expressible in JSON
            raise ConversionError(str(error)) from None
    elif not isinstance(request, dict):
        raise ConversionError(f"{operation.request.DESCRIPTOR.name} must be a JSON object")
    if operation.core.params is MessageSendParams:
        with contextlib.suppress(ValidationError):  # not the plain form: read below
            return SEND_PARAMS.validate_python(request)
    wire = operation.params_from_v1(request)
    params = operation.core.params
    return None if params is None or wire is None else params.model_validate(wire)


def encode_result(operation: V1Operation, result: Any) -> Wire:
    """A core result (model, list of models or ``None``) as the response's ProtoJSON,
    built from the core objects (no detour through their wire form)."""
    return operation.result_to_v1(result)


def encode_json(operation: V1Operation, result: Any) -> bytes:
    """``encode_result`` as JSON bytes: what the JSON-RPC and HTTP+JSON bindings send."""
    if operation.result_json is not None:
        return operation.result_json(result)
    data: bytes = to_json(operation.result_to_v1(result))
    return data


def encode_params(operation: V1Operation, params: Any) -> Wire:
    """Core params (a model or ``None``) as the v1.0 request's ProtoJSON (client side)."""
    return operation.params_to_v1(params)


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
