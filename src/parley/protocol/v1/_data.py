"""The v1.0 data model at the edge: parley's core objects <-> v1.0 ProtoJSON.

The core is the v0.3 model (``parley.types``); v1.0 is a dialect translated here. Out:
core tasks, messages and events are written by compiled serializers (``_protojson``),
which call the helpers here where the versions differ; push configs and cards are built
here as ProtoJSON dicts. In: ProtoJSON as received -> the core's wire form (camelCase
dicts), which the core model validates in one pass. What differs (v1.0.1 "what's new"):

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
- timestamps are RFC 3339 in UTC (``Z``), to the microsecond, or to the nanosecond
  when a time has one (ProtoJSON's ``Timestamp``); read back in the core's form
  (``+00:00``), so a task is the same task over either version.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from datetime import UTC, datetime
from typing import Any

from parley.protocol._errors import ConversionError
from parley.protocol._states import is_final
from parley.types import (
    DataPart,
    FileWithUri,
    Part,
    TaskState,
    TextPart,
)

Wire = dict[str, Any]

_STATES = {state: f"TASK_STATE_{state.name.upper()}" for state in TaskState}
_STATES[TaskState.unknown] = "TASK_STATE_UNSPECIFIED"
_STATES_BACK = {name: state.value for state, name in _STATES.items()}
_ROLES = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
_ROLES_BACK = {name: role for role, name in _ROLES.items()}
_EMPTY: tuple[Any, ...] = (None, "", [])


def _copy(source: Wire, *names: str) -> Wire:
    return {name: source[name] for name in names if source.get(name) not in (None, "", [])}


def take(source: Wire, *names: str) -> Wire:
    """The fields ``names`` (camelCase) of a ProtoJSON object as received, each under its
    camelCase or its proto (snake_case) name; unset (empty) ones left out."""
    out: Wire = {}
    for name in names:
        value = source.get(name)
        if value is None:
            value = source.get(_snake(name))
        if value not in _EMPTY:
            out[name] = value
    return out


@functools.cache
def _snake(name: str) -> str:
    return "".join(f"_{char.lower()}" if char.isupper() else char for char in name)


_TIME = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)?")


def _moment(text: str) -> tuple[datetime, str]:
    """``text`` (RFC 3339) as its whole second in UTC and its fraction, 6 digits or, for
    a time finer than the microsecond, 9 (ProtoJSON's Timestamp keeps nanoseconds)."""
    found = _TIME.fullmatch(text.strip()) if isinstance(text, str) else None
    if found is None:  # another ISO 8601 spelling: to the microsecond
        return _iso_moment(text)
    second, fraction, offset = found.groups()
    try:
        moment = datetime.fromisoformat(second + ("+00:00" if offset in (None, "Z") else offset))
    except ValueError:
        raise ConversionError(f"{text!r} is not an RFC 3339 time") from None
    fraction = fraction or ""
    digits = 6 if len(fraction) <= 6 or not fraction[6:].strip("0") else 9
    return moment.astimezone(UTC), fraction[:digits].ljust(digits, "0")


def _iso_moment(text: str) -> tuple[datetime, str]:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError, AttributeError):
        raise ConversionError(f"{text!r} is not an ISO 8601 time") from None
    moment = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    return moment.replace(microsecond=0), f"{moment.microsecond:06d}"


def timestamp(text: str) -> str:
    """``text`` (ISO 8601) as RFC 3339 in UTC with a ``Z``, to the microsecond, or the
    nanosecond when it has one (a time makes the round trip through v1.0 unchanged)."""
    if len(text) == 32 and text.endswith("+00:00") and text[10] == "T":
        return text[:26] + "Z"  # already the core's own form (server.agent._ids.now)
    moment, fraction = _moment(text)
    return f"{moment.replace(tzinfo=None).isoformat()}.{fraction}Z"


def core_timestamp(text: str) -> str:
    """A v1.0 time as the core writes times (``+00:00``; microseconds, or nanoseconds
    when the time has them)."""
    moment, fraction = _moment(text)
    return f"{moment.replace(tzinfo=None).isoformat()}.{fraction}+00:00"


def state_to_v1(state: str) -> str:
    return _STATES[TaskState(state)]


_STATE_NUMBERS = {
    number: _STATES[TaskState(state)]
    for number, state in enumerate(
        (
            "unknown",
            "submitted",
            "working",
            "completed",
            "failed",
            "canceled",
            "input-required",
            "rejected",
            "auth-required",
        )
    )
}
"""``TaskState`` by number (ProtoJSON reads an enum by name or number)."""


def state_from_v1(name: str | int) -> str:
    """A v1.0 task state, by name or number, as the core's; one the core does not know
    (a number past the proto's, another name) is ``unknown``, as the proto's unset."""
    if type(name) is int:
        name = _STATE_NUMBERS.get(name, "")
    return _STATES_BACK.get(name, "unknown")  # type: ignore[arg-type]


# -- parts -------------------------------------------------------------------------------


def part_to_v1(part: Part) -> Wire:
    out: Wire
    if isinstance(part, TextPart):
        out = {"text": part.text}
    elif isinstance(part, DataPart):
        out = {"data": part.data}
    else:
        file = part.file
        out = {"url": file.uri} if isinstance(file, FileWithUri) else {"raw": _base64(file.bytes)}
        if file.mime_type:
            out["mediaType"] = file.mime_type
        if file.name:
            out["filename"] = file.name
    if part.metadata is not None:
        out["metadata"] = part.metadata
    return out


def _base64(text: str) -> str:
    """v0.3's ``bytes`` as v1.0's ``raw`` (standard base64); text that is not base64 is
    sent as its UTF-8 bytes rather than refused."""
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return base64.b64encode(text.encode()).decode()
    return text


def part_from_v1(part: Any) -> Wire:
    """A v1.0 ``Part`` as the core's part; reads ProtoJSON as received (either field
    spelling, ``null`` as unset) and refuses a part that sets no content or more than one."""
    if not isinstance(part, dict):
        raise ConversionError("a Part must be a JSON object")
    get = part.get
    text, raw, url, data = get("text"), get("raw"), get("url"), get("data")
    given = (text is not None) + (raw is not None) + (url is not None) + (data is not None)
    if given != 1:
        if given:
            raise ConversionError("a Part sets more than one of text, raw, url and data")
        raise ConversionError("a Part has none of text, raw, url or data set")
    out: Wire
    if text is not None:
        if not isinstance(text, str):
            raise ConversionError("a Part's text must be a string")
        out = {"kind": "text", "text": text}
    elif data is not None:
        if not isinstance(data, dict):
            raise ConversionError("a data part must hold a JSON object")
        out = {"kind": "data", "data": data}
    else:
        out = {"kind": "file", "file": _file_from_v1(part, url, raw)}
    metadata = get("metadata")
    if metadata is not None:
        out["metadata"] = metadata
    return out


def _file_from_v1(part: Wire, url: Any, raw: Any) -> Wire:
    file: Wire
    if url is not None:
        if not isinstance(url, str):
            raise ConversionError("a Part's url must be a string")
        file = {"uri": url}
    else:
        file = {"bytes": _standard_base64(raw)}
    media_type = part.get("mediaType", part.get("media_type"))
    if media_type:
        file["mimeType"] = media_type
    if part.get("filename"):
        file["name"] = part["filename"]
    return file


_URLSAFE = str.maketrans("-_", "+/")


def _standard_base64(text: Any) -> str:
    """ProtoJSON ``bytes`` (standard or URL-safe base64, padding optional) as standard
    base64, the core's form."""
    if not isinstance(text, str):
        raise ConversionError("a Part's raw must be base64 text")
    try:
        base64.b64decode(text, validate=True)
        return text
    except (binascii.Error, ValueError):
        pass
    try:
        standard = text.rstrip("=").translate(_URLSAFE)
        data = base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise ConversionError("a Part's raw is not base64") from None
    return base64.b64encode(data).decode()


# -- messages, tasks ---------------------------------------------------------------------


_NOT_PASSED = frozenset({"role", "parts", "kind"})
_ROLE_NUMBERS = {1: "user", 2: "agent"}


def message_from_v1(message: Any) -> Wire:
    """A v1.0 ``Message`` as the core's wire form. Read as received: the fields the two
    versions share pass through under either spelling (the core model takes both), unset
    (empty) values are left out as ProtoJSON's defaults."""
    if not isinstance(message, dict):
        raise ConversionError("a Message must be a JSON object")
    out = {
        name: value
        for name, value in message.items()
        if name not in _NOT_PASSED and value not in _EMPTY
    }
    role = message.get("role")
    if isinstance(role, str):
        role = _ROLES_BACK.get(role)
    elif isinstance(role, int):
        role = _ROLE_NUMBERS.get(role)
    else:
        role = None
    if role is None:
        raise ConversionError("a Message needs a role (ROLE_USER or ROLE_AGENT)")
    out["kind"] = "message"
    out["role"] = role
    parts = message.get("parts")
    if parts is None:
        parts = ()
    elif not isinstance(parts, list):
        raise ConversionError("a Message's parts must be a list")
    out["parts"] = [part_from_v1(part) for part in parts]
    if "messageId" not in out and "message_id" not in out:
        out["messageId"] = ""
    return out


def status_from_v1(status: Wire) -> Wire:
    out: Wire = {"state": state_from_v1(status.get("state", ""))}
    if status.get("message"):
        out["message"] = message_from_v1(status["message"])
    if status.get("timestamp"):
        out["timestamp"] = core_timestamp(status["timestamp"])
    return out


def artifact_from_v1(artifact: Wire) -> Wire:
    out = _copy(artifact, "artifactId", "name", "description", "metadata", "extensions")
    out["parts"] = [part_from_v1(part) for part in artifact.get("parts", ())]
    out.setdefault("artifactId", "")
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


def push_config_from_v1(config: Any) -> Wire:
    """A flat v1.0 config as the core's ``PushNotificationConfig`` (without the task)."""
    if not isinstance(config, dict):
        raise ConversionError("a push notification config must be a JSON object")
    out = take(config, "id", "url", "token")
    authentication = config.get("authentication")
    if authentication is not None:
        if not isinstance(authentication, dict):
            raise ConversionError("authentication must be a JSON object")
        if authentication.get("scheme"):
            out["authentication"] = {"schemes": [authentication["scheme"]]}
            out["authentication"].update(take(authentication, "credentials"))
    return out


def task_push_config_to_v1(config: Wire) -> Wire:
    return push_config_to_v1(config["taskId"], config["pushNotificationConfig"])


def task_push_config_from_v1(config: Any) -> Wire:
    return {
        "taskId": take(config, "taskId").get("taskId", ""),
        "pushNotificationConfig": push_config_from_v1(config),
    }
