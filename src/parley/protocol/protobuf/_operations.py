"""Each operation of the operation table in protobuf: request and response messages and
the conversions of its params and result. The gRPC servicer, the gRPC client transport
and both sides of the HTTP+JSON binding are driven by ``PROTO_OPERATIONS``.

Where proto3 cannot say "not given", parley reads the default as the JSON-RPC binding's
absence: ``historyLength`` 0 is "no limit" (as the proto documents), and a
``SendMessageConfiguration`` without ``blocking`` set is sent as ``blocking: true``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from parley.protocol._errors import ConversionError
from parley.protocol._operations import OPERATIONS
from parley.protocol.protobuf._card import card_from_proto, card_to_proto
from parley.protocol.protobuf._core import (
    artifact_update_from_proto,
    artifact_update_to_proto,
    config_name,
    message_from_proto,
    message_to_proto,
    parse_name,
    push_config_from_proto,
    push_config_to_proto,
    set_struct,
    status_update_from_proto,
    status_update_to_proto,
    struct_or_none,
    task_from_proto,
    task_name,
    task_push_config_from_proto,
    task_push_config_to_proto,
    task_to_proto,
)
from parley.protocol.protobuf._load import empty_pb2, pb
from parley.types import (
    DeleteTaskPushNotificationConfigParams,
    Event,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskStatusUpdateEvent,
)

# -- params ------------------------------------------------------------------------------


def send_params_to_proto(params: MessageSendParams) -> Any:
    proto = pb.SendMessageRequest(request=message_to_proto(params.message))
    configuration = params.configuration
    if configuration is not None:
        proto.configuration.CopyFrom(
            pb.SendMessageConfiguration(
                accepted_output_modes=configuration.accepted_output_modes or (),
                history_length=configuration.history_length or 0,
                blocking=configuration.blocking is not False,
            )
        )
        if configuration.push_notification_config is not None:
            proto.configuration.push_notification.CopyFrom(
                push_config_to_proto(configuration.push_notification_config)
            )
    set_struct(proto.metadata, params.metadata)
    return proto


def send_params_from_proto(proto: Any) -> MessageSendParams:
    if not proto.HasField("request"):
        raise ConversionError("SendMessageRequest needs a message")
    configuration = None
    if proto.HasField("configuration"):
        config = proto.configuration
        configuration = MessageSendConfiguration(
            accepted_output_modes=list(config.accepted_output_modes) or None,
            history_length=config.history_length or None,
            blocking=config.blocking,
            push_notification_config=push_config_from_proto(config.push_notification)
            if config.HasField("push_notification")
            else None,
        )
    return MessageSendParams(
        message=message_from_proto(proto.request),
        configuration=configuration,
        metadata=struct_or_none(proto, "metadata"),
    )


def _task_id(name: str) -> str:
    return parse_name(name)[0]


def set_config_to_proto(params: TaskPushNotificationConfig) -> Any:
    return pb.CreateTaskPushNotificationConfigRequest(
        parent=task_name(params.task_id),
        config_id=params.push_notification_config.id or "",
        config=task_push_config_to_proto(params),
    )


def set_config_from_proto(proto: Any) -> TaskPushNotificationConfig:
    if not proto.HasField("config"):
        raise ConversionError("CreateTaskPushNotificationConfigRequest needs a config")
    inner = push_config_from_proto(proto.config.push_notification_config)
    if inner.id is None and proto.config_id:
        inner.id = proto.config_id
    task_id = _task_id(proto.parent) if proto.parent else _task_id(proto.config.name)
    return TaskPushNotificationConfig(task_id=task_id, push_notification_config=inner)


def get_config_from_proto(proto: Any) -> GetTaskPushNotificationConfigParams:
    task_id, config_id = parse_name(proto.name)
    return GetTaskPushNotificationConfigParams(id=task_id, push_notification_config_id=config_id)


def delete_config_from_proto(proto: Any) -> DeleteTaskPushNotificationConfigParams:
    task_id, config_id = parse_name(proto.name)
    if not config_id:
        raise ConversionError(f"{proto.name!r} names no push notification config")
    return DeleteTaskPushNotificationConfigParams(id=task_id, push_notification_config_id=config_id)


# -- results -----------------------------------------------------------------------------


def send_result_to_proto(result: Task | Message) -> Any:
    if isinstance(result, Message):
        return pb.SendMessageResponse(msg=message_to_proto(result))
    return pb.SendMessageResponse(task=task_to_proto(result))


def send_result_from_proto(proto: Any) -> Task | Message:
    kind = proto.WhichOneof("payload")
    if kind == "msg":
        return message_from_proto(proto.msg)
    if kind == "task":
        return task_from_proto(proto.task)
    raise ConversionError("SendMessageResponse has neither a task nor a message")


def event_to_proto(event: Event) -> Any:
    """An event as the ``StreamResponse`` that carries it."""
    if isinstance(event, TaskStatusUpdateEvent):
        return pb.StreamResponse(status_update=status_update_to_proto(event))
    if isinstance(event, TaskArtifactUpdateEvent):
        return pb.StreamResponse(artifact_update=artifact_update_to_proto(event))
    if isinstance(event, Task):
        return pb.StreamResponse(task=task_to_proto(event))
    return pb.StreamResponse(msg=message_to_proto(event))


def event_from_proto(proto: Any) -> Event:
    kind = proto.WhichOneof("payload")
    if kind == "status_update":
        return status_update_from_proto(proto.status_update)
    if kind == "artifact_update":
        return artifact_update_from_proto(proto.artifact_update)
    if kind == "task":
        return task_from_proto(proto.task)
    if kind == "msg":
        return message_from_proto(proto.msg)
    raise ConversionError("StreamResponse carries no event")


# -- the table ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProtoOperation:
    """One operation in protobuf: its messages and both directions of its conversions."""

    request: Any
    """The request message class."""
    response: Any
    """The response message class (of each streamed item, for a stream)."""
    params_to_proto: Callable[[Any], Any]
    params_from_proto: Callable[[Any], Any]
    result_to_proto: Callable[[Any], Any]
    result_from_proto: Callable[[Any], Any]


def _empty(_: Any) -> Any:
    return None


_TASK_ID_PARAMS = {
    "params_from_proto": lambda proto: TaskIdParams(id=_task_id(proto.name)),
    "result_to_proto": event_to_proto,
    "result_from_proto": event_from_proto,
}
_TASK_RESULT = {"result_to_proto": task_to_proto, "result_from_proto": task_from_proto}
_CONFIG_RESULT = {
    "result_to_proto": task_push_config_to_proto,
    "result_from_proto": task_push_config_from_proto,
}

PROTO_OPERATIONS: dict[str, ProtoOperation] = {
    "send_message": ProtoOperation(
        pb.SendMessageRequest,
        pb.SendMessageResponse,
        send_params_to_proto,
        send_params_from_proto,
        send_result_to_proto,
        send_result_from_proto,
    ),
    "stream_message": ProtoOperation(
        pb.SendMessageRequest,
        pb.StreamResponse,
        send_params_to_proto,
        send_params_from_proto,
        event_to_proto,
        event_from_proto,
    ),
    "get_task": ProtoOperation(
        pb.GetTaskRequest,
        pb.Task,
        lambda p: pb.GetTaskRequest(name=task_name(p.id), history_length=p.history_length or 0),
        lambda proto: TaskQueryParams(
            id=_task_id(proto.name), history_length=proto.history_length or None
        ),
        **_TASK_RESULT,
    ),
    "cancel_task": ProtoOperation(
        pb.CancelTaskRequest,
        pb.Task,
        lambda p: pb.CancelTaskRequest(name=task_name(p.id)),
        lambda proto: TaskIdParams(id=_task_id(proto.name)),
        **_TASK_RESULT,
    ),
    "resubscribe": ProtoOperation(
        pb.TaskSubscriptionRequest,
        pb.StreamResponse,
        lambda p: pb.TaskSubscriptionRequest(name=task_name(p.id)),
        **_TASK_ID_PARAMS,
    ),
    "set_push_config": ProtoOperation(
        pb.CreateTaskPushNotificationConfigRequest,
        pb.TaskPushNotificationConfig,
        set_config_to_proto,
        set_config_from_proto,
        **_CONFIG_RESULT,
    ),
    "get_push_config": ProtoOperation(
        pb.GetTaskPushNotificationConfigRequest,
        pb.TaskPushNotificationConfig,
        lambda p: pb.GetTaskPushNotificationConfigRequest(
            name=config_name(p.id, p.push_notification_config_id)
        ),
        get_config_from_proto,
        **_CONFIG_RESULT,
    ),
    "list_push_configs": ProtoOperation(
        pb.ListTaskPushNotificationConfigRequest,
        pb.ListTaskPushNotificationConfigResponse,
        lambda p: pb.ListTaskPushNotificationConfigRequest(parent=task_name(p.id)),
        lambda proto: ListTaskPushNotificationConfigParams(id=_task_id(proto.parent)),
        lambda result: pb.ListTaskPushNotificationConfigResponse(
            configs=[task_push_config_to_proto(item) for item in result]
        ),
        lambda proto: [task_push_config_from_proto(item) for item in proto.configs],
    ),
    "delete_push_config": ProtoOperation(
        pb.DeleteTaskPushNotificationConfigRequest,
        empty_pb2.Empty,
        lambda p: pb.DeleteTaskPushNotificationConfigRequest(
            name=config_name(p.id, p.push_notification_config_id)
        ),
        delete_config_from_proto,
        lambda _: empty_pb2.Empty(),
        _empty,
    ),
    "get_extended_card": ProtoOperation(
        pb.GetAgentCardRequest,
        pb.AgentCard,
        lambda _: pb.GetAgentCardRequest(),
        _empty,
        card_to_proto,
        card_from_proto,
    ),
}

assert set(PROTO_OPERATIONS) == {op.name for op in OPERATIONS}, "an operation has no proto form"
