"""The v1.0 data model at the edge: parley's core objects <-> v1.0 ProtoJSON.

The core is the v0.3 model (``parley.types``); v1.0 is a dialect translated here, on wire
dicts (camelCase): the core's ``to_wire()`` form on one side, the ProtoJSON form of
``lf.a2a.v1`` on the other. What differs (v1.0.1 "what's new"):

- parts carry no ``kind``: ``text``, ``raw`` (bytes, base64 in JSON), ``url`` or ``data``
  is set, with ``mediaType`` and ``filename`` beside it (v0.3's ``file.mimeType`` and
  ``file.name``); a text or data part's ``mediaType`` has no place in the core and is
  dropped; ``data`` that is not a JSON object is refused (the core's DataPart holds one);
- enums are ``TASK_STATE_*`` and ``ROLE_*``; the core's ``unknown`` is
  ``TASK_STATE_UNSPECIFIED``;
- messages, tasks and events have no ``kind``; a stream event is a one-of
  (``{"statusUpdate": ...}``), and a status update has no ``final``: read back, it is
  final when its state ends the interaction (terminal or interrupted);
- a push config is flat (``taskId``, ``id``, ``url``, ``token``, ``authentication``
  with one ``scheme``);
- timestamps are RFC 3339 in UTC (``Z``), to the microsecond; read back in the core's
  form (``+00:00``), so a task is the same task over either version.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from typing import Any

from parley.protocol._errors import ConversionError
from parley.protocol._states import is_final
from parley.types import TaskState

Wire = dict[str, Any]

_STATES = {state: f"TASK_STATE_{state.name.upper()}" for state in TaskState}
_STATES[TaskState.unknown] = "TASK_STATE_UNSPECIFIED"
_STATES_BACK = {name: state.value for state, name in _STATES.items()}
_ROLES = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
_ROLES_BACK = {name: role for role, name in _ROLES.items()}


def _copy(source: Wire, *names: str) -> Wire:
    return {name: source[name] for name in names if source.get(name) not in (None, "", [])}


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ConversionError(f"{text!r} is not an ISO 8601 time") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def timestamp(text: str) -> str:
    """``text`` (ISO 8601) as RFC 3339 in UTC with a ``Z``, to the microsecond (parley's
    own precision, so a time makes the round trip through v1.0 unchanged)."""
    return _moment(text).isoformat(timespec="microseconds").replace("+00:00", "Z")


def core_timestamp(text: str) -> str:
    """A v1.0 time as the core writes times (``+00:00``, microseconds)."""
    return _moment(text).isoformat(timespec="microseconds")


def state_to_v1(state: str) -> str:
    return _STATES[TaskState(state)]


def state_from_v1(name: str) -> str:
    return _STATES_BACK.get(name, "unknown")


# -- parts -------------------------------------------------------------------------------


def part_to_v1(part: Wire) -> Wire:
    kind = part.get("kind")
    out: Wire = _copy(part, "metadata")
    if kind == "text":
        out["text"] = part["text"]
    elif kind == "data":
        out["data"] = part["data"]
    else:
        file = part["file"]
        if "uri" in file:
            out["url"] = file["uri"]
        else:
            out["raw"] = _base64(file["bytes"])
        if file.get("mimeType"):
            out["mediaType"] = file["mimeType"]
        if file.get("name"):
            out["filename"] = file["name"]
    return out


def _base64(text: str) -> str:
    """v0.3's ``bytes`` as v1.0's ``raw`` (standard base64); text that is not base64 is
    sent as its UTF-8 bytes rather than refused."""
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return base64.b64encode(text.encode()).decode()
    return text


def part_from_v1(part: Wire) -> Wire:
    out: Wire = {"kind": "text"}
    out.update(_copy(part, "metadata"))
    if "text" in part:
        out["text"] = part["text"]
        return out
    if "data" in part:
        if not isinstance(part["data"], dict):
            raise ConversionError("a data part must hold a JSON object")
        out.update(kind="data", data=part["data"])
        return out
    file: Wire = {}
    if "url" in part:
        file["uri"] = part["url"]
    elif "raw" in part:
        file["bytes"] = part["raw"]
    else:
        raise ConversionError("a Part has none of text, raw, url or data set")
    if part.get("mediaType"):
        file["mimeType"] = part["mediaType"]
    if part.get("filename"):
        file["name"] = part["filename"]
    out.update(kind="file", file=file)
    return out


# -- messages, tasks ---------------------------------------------------------------------

_MESSAGE_FIELDS = ("messageId", "contextId", "taskId", "metadata", "extensions")


def message_to_v1(message: Wire) -> Wire:
    out = _copy(message, *_MESSAGE_FIELDS, "referenceTaskIds")
    out["role"] = _ROLES[message["role"]]
    out["parts"] = [part_to_v1(part) for part in message["parts"]]
    return out


def message_from_v1(message: Wire) -> Wire:
    out = _copy(message, *_MESSAGE_FIELDS, "referenceTaskIds")
    role = _ROLES_BACK.get(message.get("role", ""))
    if role is None:
        raise ConversionError("a Message needs a role (ROLE_USER or ROLE_AGENT)")
    out.update(kind="message", role=role)
    out["parts"] = [part_from_v1(part) for part in message.get("parts", ())]
    out.setdefault("messageId", "")
    return out


def status_to_v1(status: Wire) -> Wire:
    out: Wire = {"state": state_to_v1(status["state"])}
    if status.get("message"):
        out["message"] = message_to_v1(status["message"])
    if status.get("timestamp"):
        out["timestamp"] = timestamp(status["timestamp"])
    return out


def status_from_v1(status: Wire) -> Wire:
    out: Wire = {"state": state_from_v1(status.get("state", ""))}
    if status.get("message"):
        out["message"] = message_from_v1(status["message"])
    if status.get("timestamp"):
        out["timestamp"] = core_timestamp(status["timestamp"])
    return out


def artifact_to_v1(artifact: Wire) -> Wire:
    out = _copy(artifact, "artifactId", "name", "description", "metadata", "extensions")
    out["parts"] = [part_to_v1(part) for part in artifact["parts"]]
    return out


def artifact_from_v1(artifact: Wire) -> Wire:
    out = _copy(artifact, "artifactId", "name", "description", "metadata", "extensions")
    out["parts"] = [part_from_v1(part) for part in artifact.get("parts", ())]
    out.setdefault("artifactId", "")
    return out


def task_to_v1(task: Wire) -> Wire:
    out = _copy(task, "id", "contextId", "metadata")
    out["status"] = status_to_v1(task["status"])
    if task.get("artifacts"):
        out["artifacts"] = [artifact_to_v1(item) for item in task["artifacts"]]
    if task.get("history"):
        out["history"] = [message_to_v1(item) for item in task["history"]]
    return out


def task_from_v1(task: Wire) -> Wire:
    out = _copy(task, "id", "contextId", "metadata")
    out.update(kind="task", status=status_from_v1(task.get("status", {})))
    out.setdefault("contextId", "")
    if task.get("artifacts"):
        out["artifacts"] = [artifact_from_v1(item) for item in task["artifacts"]]
    if task.get("history"):
        out["history"] = [message_from_v1(item) for item in task["history"]]
    return out


# -- events ------------------------------------------------------------------------------


def event_to_v1(event: Wire) -> Wire:
    """A core event as the ``StreamResponse`` one-of that carries it."""
    kind = event["kind"]
    if kind == "task":
        return {"task": task_to_v1(event)}
    if kind == "message":
        return {"message": message_to_v1(event)}
    out = _copy(event, "taskId", "contextId", "metadata")
    if kind == "status-update":
        out["status"] = status_to_v1(event["status"])
        return {"statusUpdate": out}
    out["artifact"] = artifact_to_v1(event["artifact"])
    out.update(_copy(event, "append", "lastChunk"))
    return {"artifactUpdate": out}


def event_from_v1(response: Wire) -> Wire:
    if "task" in response:
        return task_from_v1(response["task"])
    if "message" in response:
        return message_from_v1(response["message"])
    if "statusUpdate" in response:
        update = response["statusUpdate"]
        status = status_from_v1(update.get("status", {}))
        out = _copy(update, "taskId", "contextId", "metadata")
        out.update(kind="status-update", status=status, final=is_final(TaskState(status["state"])))
        return out
    if "artifactUpdate" in response:
        update = response["artifactUpdate"]
        out = _copy(update, "taskId", "contextId", "metadata", "append", "lastChunk")
        out.update(kind="artifact-update", artifact=artifact_from_v1(update.get("artifact", {})))
        return out
    raise ConversionError("a StreamResponse carries none of task, message or an update")


# -- push notification configs -----------------------------------------------------------


def push_config_to_v1(task_id: str, config: Wire) -> Wire:
    """A core ``PushNotificationConfig`` of task ``task_id`` as v1.0's flat config."""
    out = _copy(config, "id", "url", "token")
    out["taskId"] = task_id
    authentication = config.get("authentication")
    if authentication and authentication.get("schemes"):
        out["authentication"] = {"scheme": authentication["schemes"][0]}
        out["authentication"].update(_copy(authentication, "credentials"))
    return out


def push_config_from_v1(config: Wire) -> Wire:
    """A flat v1.0 config as the core's ``PushNotificationConfig`` (without the task)."""
    out = _copy(config, "id", "url", "token")
    authentication = config.get("authentication")
    if authentication and authentication.get("scheme"):
        out["authentication"] = {"schemes": [authentication["scheme"]]}
        out["authentication"].update(_copy(authentication, "credentials"))
    return out


def task_push_config_to_v1(config: Wire) -> Wire:
    return push_config_to_v1(config["taskId"], config["pushNotificationConfig"])


def task_push_config_from_v1(config: Wire) -> Wire:
    return {
        "taskId": config.get("taskId", ""),
        "pushNotificationConfig": push_config_from_v1(config),
    }
