"""v1.0 requests read as received: a request's ProtoJSON (parsed JSON, or what gRPC's
message gives as a dict) -> the core params in wire form, with no detour through the
proto message.

ProtoJSON's reading rules are kept where they matter: a field under its camelCase or its
proto (snake_case) name, ``null`` and empty values as unset, enums by name or number,
unknown fields ignored, a field of the wrong type refused with its name. The shapes both
versions share pass through to the core model, whose validation (one pass) checks their
types; only what differs is rebuilt here. Raises ``ConversionError``.
"""

from __future__ import annotations

from typing import Any

from parley.protocol._errors import ConversionError, InvalidParamsError
from parley.protocol.v1._data import (
    Wire,
    core_timestamp,
    message_from_v1,
    push_config_from_v1,
    state_from_v1,
    take,
)

_NOT_PASSED = frozenset(
    {
        "returnImmediately",
        "return_immediately",
        "taskPushNotificationConfig",
        "task_push_notification_config",
        "blocking",
        "pushNotificationConfig",
        "push_notification_config",
    }
)
_BOOLEANS = {True: True, False: False, "true": True, "false": False}


def _object(value: Any, what: str) -> Wire:
    if not isinstance(value, dict):
        raise ConversionError(f"{what} must be a JSON object")
    return value


def tenant_of(request: Any) -> str | None:
    """The ``tenant`` of a request's ProtoJSON (parsed JSON; ``None`` when unset or
    empty). Every v1.0 request message has the field; it scopes the call, so a value
    that is not a string is refused (``InvalidParamsError``) rather than read as none."""
    if not isinstance(request, dict):
        return None
    tenant = request.get("tenant")
    if tenant is None:
        return None
    if not isinstance(tenant, str):
        raise InvalidParamsError("tenant must be a string")
    return tenant or None


def send_from_v1(request: Wire) -> Wire:
    """``SendMessageRequest`` -> ``MessageSendParams``."""
    message = request.get("message")
    if not message:
        raise ConversionError("SendMessageRequest needs a message")
    out: Wire = {"message": message_from_v1(message)}
    metadata = request.get("metadata")
    if metadata is not None:
        out["metadata"] = metadata
    config = request.get("configuration")
    if config is not None:
        out["configuration"] = configuration_from_v1(config)
    return out


def configuration_from_v1(config: Any) -> Wire:
    """``SendMessageConfiguration`` -> ``MessageSendConfiguration``."""
    config = _object(config, "configuration")
    core = {
        name: value
        for name, value in config.items()
        if name not in _NOT_PASSED and value not in (None, "", [])
    }
    immediately = config.get("returnImmediately", config.get("return_immediately", False))
    if immediately is None:
        immediately = False
    if not isinstance(immediately, bool | str) or immediately not in _BOOLEANS:
        raise ConversionError("configuration.returnImmediately must be true or false")
    core["blocking"] = not _BOOLEANS[immediately]
    push = config.get("taskPushNotificationConfig", config.get("task_push_notification_config"))
    if push:
        core["pushNotificationConfig"] = push_config_from_v1(push)
    return core


def list_tasks_from_v1(request: Wire) -> Wire:
    """``ListTasksRequest`` -> ``ListTasksParams``."""
    out = take(
        request,
        "contextId",
        "pageSize",
        "pageToken",
        "historyLength",
        "includeArtifacts",
        "statusTimestampAfter",
        "tenant",
    )
    after = out.get("statusTimestampAfter")
    if after is not None:
        if not isinstance(after, str):
            raise ConversionError("statusTimestampAfter must be an RFC 3339 time")
        out["statusTimestampAfter"] = core_timestamp(after)
    status = request.get("status")
    if status not in (None, "", "TASK_STATE_UNSPECIFIED", 0):
        state = state_from_v1(status) if type(status) in (str, int) else "unknown"
        if state == "unknown":
            raise ConversionError("status is not a TaskState name (TASK_STATE_WORKING, ...)")
        out["status"] = state
    return out


def task_id(request: Wire) -> Wire:
    """A request naming a task by ``id`` -> ``TaskIdParams``."""
    return {"id": take(request, "id").get("id", "")}


def task_query(request: Wire) -> Wire:
    """``GetTaskRequest`` -> ``TaskQueryParams``."""
    return {**task_id(request), **take(request, "historyLength")}


def cancel(request: Wire) -> Wire:
    """``CancelTaskRequest`` -> ``TaskIdParams`` with its metadata."""
    return {**task_id(request), **take(request, "metadata")}


def config_ids(request: Wire) -> Wire:
    """A request naming a push config by ``taskId`` and ``id``."""
    ids = take(request, "taskId", "id")
    return {"id": ids.get("taskId", ""), "pushNotificationConfigId": ids.get("id", "")}


def config_task(request: Wire) -> Wire:
    """``ListTaskPushNotificationConfigsRequest`` -> its task's ``id``."""
    return {"id": take(request, "taskId").get("taskId", "")}
