"""Protobuf <-> parley for the data model: parts, messages, tasks, events, push configs.

The proto (``a2a.proto``) and the JSON schema describe the same objects with a few
differences, resolved here once and the same way as the official SDK does:

- proto3 strings and lists have no presence: ``""`` and ``[]`` read back as ``None``;
- ``Part`` has no ``metadata``, a file has no ``name``, a message no ``referenceTaskIds``:
  they do not cross a protobuf binding;
- ``FilePart.file_with_bytes`` carries the UTF-8 bytes of the base64 text (not the
  decoded content): that is what the official SDK puts there, so files round-trip
  between parley and its clients and servers;
- ``google.protobuf.Struct`` holds numbers as doubles; whole numbers read back as ints;
- ``TaskState`` ``unknown`` is ``TASK_STATE_UNSPECIFIED``.
- a push config's resource name always names a config: without an id, the task's id
  (``config_name``); a bare ``tasks/{id}`` from an older client still parses.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

from parley.protocol._errors import ConversionError
from parley.protocol.protobuf._load import pb, struct_pb2
from parley.types import (
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Message,
    Part,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

_MAX_EXACT_INT = 2**53

# -- Struct ------------------------------------------------------------------------------


def set_struct(target: Any, data: dict[str, Any] | None) -> None:
    """Fill the Struct field ``target`` (a present but empty Struct for ``{}``)."""
    if data is not None:
        target.SetInParent()
        target.update(data)


def struct_or_none(message: Any, field: str) -> dict[str, Any] | None:
    if not message.HasField(field):
        return None
    return struct_to_dict(getattr(message, field), field)


def struct_to_dict(struct: struct_pb2.Struct, field: str = "data") -> dict[str, Any]:
    """The JSON object of a Struct (the field ``field``). Raises ``ConversionError`` for
    what a Struct can hold and JSON cannot: NaN or an infinity, a ``Value`` of no kind."""
    try:
        return {key: _plain(value) for key, value in struct.items()}
    except ValueError as error:  # protobuf's "Value not set", or _plain's
        raise ConversionError(f"{field} holds a value JSON cannot express: {error}") from None


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        if value.is_integer() and abs(value) <= _MAX_EXACT_INT:
            return int(value)
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a JSON number")
        return value
    if isinstance(value, struct_pb2.Struct):
        return struct_to_dict(value)
    if isinstance(value, struct_pb2.ListValue):
        return [_plain(item) for item in value]
    return value


# -- parts and messages ------------------------------------------------------------------


def part_to_proto(part: Part) -> Any:
    if isinstance(part, TextPart):
        return pb.Part(text=part.text)
    if isinstance(part, DataPart):
        proto = pb.Part()
        set_struct(proto.data.data, part.data)
        return proto
    file = part.file
    if isinstance(file, FileWithUri):
        return pb.Part(file=pb.FilePart(file_with_uri=file.uri, mime_type=file.mime_type or ""))
    return pb.Part(
        file=pb.FilePart(file_with_bytes=file.bytes.encode(), mime_type=file.mime_type or "")
    )


def part_from_proto(proto: Any) -> Part:
    kind = proto.WhichOneof("part")
    if kind == "text":
        return TextPart(text=proto.text)
    if kind == "data":
        return DataPart(data=struct_to_dict(proto.data.data, "a data part's data"))
    if kind == "file":
        file = proto.file
        mime_type = file.mime_type or None
        if file.WhichOneof("file") == "file_with_uri":
            return FilePart(file=FileWithUri(uri=file.file_with_uri, mime_type=mime_type))
        content = file.file_with_bytes.decode("utf-8", errors="replace")
        return FilePart(file=FileWithBytes(bytes=content, mime_type=mime_type))
    raise ConversionError("a Part has none of text, file or data set")


_ROLE_TO_PROTO = {Role.user: pb.ROLE_USER, Role.agent: pb.ROLE_AGENT}
_ROLE_FROM_PROTO = {value: key for key, value in _ROLE_TO_PROTO.items()}


def message_to_proto(message: Message) -> Any:
    proto = pb.Message(
        message_id=message.message_id,
        context_id=message.context_id or "",
        task_id=message.task_id or "",
        role=_ROLE_TO_PROTO[message.role],
        content=[part_to_proto(part) for part in message.parts],
        extensions=message.extensions or (),
    )
    set_struct(proto.metadata, message.metadata)
    return proto


def message_from_proto(proto: Any) -> Message:
    role = _ROLE_FROM_PROTO.get(proto.role)
    if role is None:
        raise ConversionError("a Message has no role (ROLE_USER or ROLE_AGENT)")
    return Message(
        message_id=proto.message_id,
        role=role,
        parts=[part_from_proto(part) for part in proto.content],
        context_id=proto.context_id or None,
        task_id=proto.task_id or None,
        extensions=list(proto.extensions) or None,
        metadata=struct_or_none(proto, "metadata"),
    )


# -- tasks -------------------------------------------------------------------------------

_STATE_TO_PROTO = {
    TaskState.submitted: pb.TASK_STATE_SUBMITTED,
    TaskState.working: pb.TASK_STATE_WORKING,
    TaskState.input_required: pb.TASK_STATE_INPUT_REQUIRED,
    TaskState.completed: pb.TASK_STATE_COMPLETED,
    TaskState.canceled: pb.TASK_STATE_CANCELLED,
    TaskState.failed: pb.TASK_STATE_FAILED,
    TaskState.rejected: pb.TASK_STATE_REJECTED,
    TaskState.auth_required: pb.TASK_STATE_AUTH_REQUIRED,
    TaskState.unknown: pb.TASK_STATE_UNSPECIFIED,
}
_STATE_FROM_PROTO = {value: key for key, value in _STATE_TO_PROTO.items()}


def status_to_proto(status: TaskStatus) -> Any:
    proto = pb.TaskStatus(state=_STATE_TO_PROTO[status.state])
    if status.message is not None:
        proto.update.CopyFrom(message_to_proto(status.message))
    if status.timestamp:
        _set_time(proto.timestamp, status.timestamp)
    return proto


def _set_time(target: Any, text: str) -> None:
    try:
        target.FromJsonString(text)  # RFC 3339, to the nanosecond
        return
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        target.Clear()  # not ISO 8601: a peer's mistake that must not fail the whole call
        return
    target.FromDatetime(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def status_from_proto(proto: Any) -> TaskStatus:
    return TaskStatus(
        state=_STATE_FROM_PROTO.get(proto.state, TaskState.unknown),
        message=message_from_proto(proto.update) if proto.HasField("update") else None,
        timestamp=proto.timestamp.ToJsonString() if proto.HasField("timestamp") else None,
    )


def artifact_to_proto(artifact: Artifact) -> Any:
    proto = pb.Artifact(
        artifact_id=artifact.artifact_id,
        name=artifact.name or "",
        description=artifact.description or "",
        parts=[part_to_proto(part) for part in artifact.parts],
        extensions=artifact.extensions or (),
    )
    set_struct(proto.metadata, artifact.metadata)
    return proto


def artifact_from_proto(proto: Any) -> Artifact:
    return Artifact(
        artifact_id=proto.artifact_id,
        parts=[part_from_proto(part) for part in proto.parts],
        name=proto.name or None,
        description=proto.description or None,
        extensions=list(proto.extensions) or None,
        metadata=struct_or_none(proto, "metadata"),
    )


def task_to_proto(task: Task) -> Any:
    proto = pb.Task(
        id=task.id,
        context_id=task.context_id,
        status=status_to_proto(task.status),
        artifacts=[artifact_to_proto(artifact) for artifact in task.artifacts or ()],
        history=[message_to_proto(message) for message in task.history or ()],
    )
    set_struct(proto.metadata, task.metadata)
    return proto


def task_from_proto(proto: Any) -> Task:
    return Task(
        id=proto.id,
        context_id=proto.context_id,
        status=status_from_proto(proto.status),
        artifacts=[artifact_from_proto(artifact) for artifact in proto.artifacts] or None,
        history=[message_from_proto(message) for message in proto.history] or None,
        metadata=struct_or_none(proto, "metadata"),
    )


# -- events ------------------------------------------------------------------------------


def status_update_to_proto(event: TaskStatusUpdateEvent) -> Any:
    proto = pb.TaskStatusUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        status=status_to_proto(event.status),
        final=event.final,
    )
    set_struct(proto.metadata, event.metadata)
    return proto


def status_update_from_proto(proto: Any) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=proto.task_id,
        context_id=proto.context_id,
        status=status_from_proto(proto.status),
        final=proto.final,
        metadata=struct_or_none(proto, "metadata"),
    )


def artifact_update_to_proto(event: TaskArtifactUpdateEvent) -> Any:
    proto = pb.TaskArtifactUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        artifact=artifact_to_proto(event.artifact),
        append=bool(event.append),
        last_chunk=bool(event.last_chunk),
    )
    set_struct(proto.metadata, event.metadata)
    return proto


def artifact_update_from_proto(proto: Any) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=proto.task_id,
        context_id=proto.context_id,
        artifact=artifact_from_proto(proto.artifact),
        append=proto.append or None,
        last_chunk=proto.last_chunk or None,
        metadata=struct_or_none(proto, "metadata"),
    )


# -- push notification configs -----------------------------------------------------------

_CONFIG_NAME = re.compile(
    r"^tasks/(?P<task>.+?)(?:/pushNotificationConfigs/(?P<config>[^/]*))?$", re.DOTALL
)


def task_name(task_id: str) -> str:
    """The resource name of a task: ``tasks/{id}``."""
    return f"tasks/{task_id}"


def push_config_id(task_id: str, config_id: str | None) -> str:
    """The id a push config goes by: its own, or (none or empty) the task's id, where a
    config set without an id is stored (as the official SDK stores it)."""
    return config_id or task_id


def config_name(task_id: str, config_id: str | None) -> str:
    """``tasks/{id}/pushNotificationConfigs/{config_id}``, always whole (the proto's HTTP
    rule; the official SDK refuses a bare ``tasks/{id}``): see :func:`push_config_id`."""
    return f"tasks/{task_id}/pushNotificationConfigs/{push_config_id(task_id, config_id)}"


def parse_name(name: str) -> tuple[str, str | None]:
    """``(task id, push config id or None)`` from a resource name; a bare id is accepted."""
    match = _CONFIG_NAME.match(name)
    if match is None:
        if not name or "/" in name:
            raise ConversionError(f"{name!r} is not a task resource name (tasks/{{id}})")
        return name, None
    return match["task"], match["config"]


def push_config_to_proto(config: PushNotificationConfig) -> Any:
    proto = pb.PushNotificationConfig(id=config.id or "", url=config.url, token=config.token or "")
    if config.authentication is not None:
        proto.authentication.CopyFrom(
            pb.AuthenticationInfo(
                schemes=config.authentication.schemes,
                credentials=config.authentication.credentials or "",
            )
        )
    return proto


def push_config_from_proto(proto: Any) -> PushNotificationConfig:
    authentication = None
    if proto.HasField("authentication"):
        authentication = PushNotificationAuthenticationInfo(
            schemes=list(proto.authentication.schemes),
            credentials=proto.authentication.credentials or None,
        )
    return PushNotificationConfig(
        url=proto.url,
        id=proto.id or None,
        token=proto.token or None,
        authentication=authentication,
    )


def task_push_config_to_proto(config: TaskPushNotificationConfig) -> Any:
    inner = config.push_notification_config
    return pb.TaskPushNotificationConfig(
        name=config_name(config.task_id, inner.id),
        push_notification_config=push_config_to_proto(inner),
    )


def task_push_config_from_proto(proto: Any) -> TaskPushNotificationConfig:
    task_id, config_id = parse_name(proto.name)
    inner = push_config_from_proto(proto.push_notification_config)
    if inner.id is None and config_id and config_id != task_id:
        # the task's id in the name is what ``config_name`` writes for a config without one
        inner.id = config_id
    return TaskPushNotificationConfig(task_id=task_id, push_notification_config=inner)
