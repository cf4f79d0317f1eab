"""v1.0 ProtoJSON of the hot shapes, compiled: the core objects written straight to v1.0
JSON, and ``SendMessage`` requests read straight from bytes into the core params.

Theory of operation. v1.0 differs from the core model (v0.3's) in few places: no
``kind``, ``TASK_STATE_*`` and ``ROLE_*`` enums, times in ``Z``, a status update without
``final``, a file part flattened, empty values as unset (``_data`` lists them all). So
instead of walking objects in Python, the core models' own pydantic-core schemas are
copied with those places changed, and compiled once into a ``SchemaSerializer`` (out)
and a ``SchemaValidator`` (in). Everything the versions share runs in pydantic-core;
Python is called only where they differ (a role, a state, a time, a file part).

Both are compiled with ``_use_prebuilt=False``: otherwise pydantic-core reads and writes
a nested model through its class's own validator and serializer, which know only v0.3.
In: the schema still builds the core classes, so what comes out is the core params,
validated once. A request this reader refuses is read again by ``_requests``, whose
errors name the problem in v1.0's words; the tests hold the two readers to the same
answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import SchemaSerializer, SchemaValidator, core_schema

from parley._speedups import encode_task
from parley.protocol.v1._data import (
    _ROLES,
    _ROLES_BACK,
    _STATES,
    Wire,
    part_from_v1,
    part_to_v1,
    timestamp,
)
from parley.protocol.v1._requests import configuration_from_v1
from parley.types import (
    FilePart,
    Message,
    MessageSendParams,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

Schema = dict[str, Any]

_NOT_V1 = frozenset({"kind", "final"})
"""Core fields v1.0 does not have."""


def _function(function: Callable[..., Any], **options: Any) -> Schema:
    return dict(core_schema.plain_serializer_function_ser_schema(function, **options))


def _innermost(schema: Schema) -> Schema:
    """The schema under a field's ``default`` and ``nullable`` wrappers."""
    while schema["type"] in ("default", "nullable"):
        schema = schema["schema"]
    return schema


def _rewrapped(schema: Schema, inner: Schema) -> Schema:
    """``schema`` with the innermost schema under its wrappers replaced by ``inner``."""
    if schema["type"] in ("default", "nullable"):
        return {**schema, "schema": _rewrapped(schema["schema"], inner)}
    return inner


# -- out: core objects -> v1.0 JSON ------------------------------------------------------


def _writer(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_writer(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    cls = schema.get("cls")
    if kind == "enum" and cls is TaskState:
        return {**schema, "serialization": _function(_STATES.__getitem__)}
    if kind == "enum" and cls is Role:
        return {**schema, "serialization": _function(_ROLES.__getitem__)}
    if kind == "model" and cls is FilePart:
        return {**schema, "serialization": _function(part_to_v1)}
    copied = _copied(schema, _writer)
    if kind == "tagged-union":
        # Written by its members' schemas, the copies: not as "any" (pydantic's
        # SerializeAsAny), which would write each part through its class's own.
        copied.pop("serialization", None)
    if kind == "model-fields":
        fields = copied["fields"]
        for name in _NOT_V1 & fields.keys():
            fields[name] = {**fields[name], "serialization_exclude": True}
        if "state" in fields and _innermost(fields["state"]["schema"]).get("cls") is TaskState:
            # ProtoJSON leaves a field at its default out: TASK_STATE_UNSPECIFIED
            fields["state"] = {**fields["state"], "serialization_exclude_if": _unspecified}
        if "timestamp" in fields:
            field = fields["timestamp"]
            time = {"type": "str", "serialization": _function(_time)}
            fields["timestamp"] = {**field, "schema": _rewrapped(field["schema"], time)}
    return copied


def _copied(schema: Schema, rewrite: Callable[[Any], Any]) -> Schema:
    """``schema`` with ``rewrite`` applied to what it holds. Without the ``ref``s: a ref
    names the core's schema, which the copy no longer is."""
    copied = {
        key: value if key in ("metadata", "config", "cls") else rewrite(value)
        for key, value in schema.items()
        if key != "ref"
    }
    if schema.get("type") == "model-fields":
        copied["fields"] = dict(copied["fields"])
    return copied


def _unspecified(state: TaskState) -> bool:
    return state is TaskState.unknown


def _time(text: str) -> str | None:
    return timestamp(text) if text else None


def _compiled_writer(model: type[Any]) -> SchemaSerializer:
    # Not "prebuilt": pydantic-core would write a model through its class's own
    # serializer (v0.3's), not through the copy made here.
    return SchemaSerializer(_writer(model.__pydantic_core_schema__), _use_prebuilt=False)


_WRITERS = {
    model: _compiled_writer(model)
    for model in (Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent)
}
_ONE_OF = {
    Task: b"task",
    Message: b"message",
    TaskStatusUpdateEvent: b"statusUpdate",
    TaskArtifactUpdateEvent: b"artifactUpdate",
}
_ONE_OF_NAMES = {model: name.decode() for model, name in _ONE_OF.items()}


def to_v1_json(value: Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent) -> bytes:
    """A core task, message or update as the v1.0 JSON of the same object."""
    kind = type(value)
    if kind is Task:
        written = encode_task(value, "1.0")  # type: ignore[arg-type]
        if written is not None:
            return written
    data: bytes = _WRITERS[kind].to_json(value, by_alias=True, exclude_none=True)
    return data


def to_v1(value: Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent) -> Wire:
    """``to_v1_json`` as a ProtoJSON dict (gRPC's messages and the client are built from it)."""
    data: Wire = _WRITERS[type(value)].to_python(
        value, mode="json", by_alias=True, exclude_none=True
    )
    return data


def event_json(event: Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent) -> bytes:
    """A core event as the JSON of the ``StreamResponse`` (or ``SendMessageResponse``)
    one-of that carries it: ``{"statusUpdate": ...}``."""
    kind = type(event)
    if kind is Task:  # a send's answer: its final task, most often of one shape
        written = encode_task(event, "1.0", '{"task":')  # type: ignore[arg-type]
        if written is not None:
            return written
    return b'{"%s":%s}' % (
        _ONE_OF[kind],
        _WRITERS[kind].to_json(event, by_alias=True, exclude_none=True),
    )


def event_to_v1(event: Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent) -> Wire:
    """``event_json`` as a ProtoJSON dict."""
    return {_ONE_OF_NAMES[type(event)]: to_v1(event)}


# -- in: SendMessage request bytes -> the core params -------------------------------------
#
# The reader takes the plain form of a request, as v1.0 clients write it, and leaves the
# rest to ``_requests`` (the binding's slow path): an empty string or list given for an
# optional field (ProtoJSON's "unset"), a text or data part with any other field (a
# ``mediaType``, or a second content, which is refused there with its reason).


_ROLE_READ: dict[Any, Role] = {
    **{name: Role(role) for name, role in _ROLES_BACK.items()},
    1: Role.user,
    2: Role.agent,
}


_ROLE_TYPES = frozenset({str, int, bool})  # as _data reads a role: by name or number


def _role(value: Any) -> Role:
    role = _ROLE_READ.get(value) if type(value) in _ROLE_TYPES else None
    if role is None:
        raise ValueError("a Message needs a role (ROLE_USER or ROLE_AGENT)")
    return role


def _constant(value: str) -> Schema:
    """A core field v1.0 does not have (``kind``): whatever is sent, the core's value."""
    return {
        "type": "default",
        "default": value,
        "schema": core_schema.no_info_plain_validator_function(lambda _: value),
    }


def _reader(schema: Any, alone: bool = False) -> Any:
    """The reader of what ``schema`` validates. ``alone``: its params take no field but
    their own (a ``SendMessageRequest``'s ``tenant`` among them)."""
    if isinstance(schema, list):
        return [_reader(item, alone) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind == "enum" and schema["cls"] is Role:
        return core_schema.no_info_plain_validator_function(_role)
    if kind == "tagged-union" and set(schema["choices"]) == {"text", "file", "data"}:
        choices = {name: _reader(choice) for name, choice in schema["choices"].items()}
        for name in ("text", "data"):  # nothing beside the content and its metadata
            choices[name]["schema"]["extra_behavior"] = "forbid"
        file = core_schema.no_info_before_validator_function(part_from_v1, choices["file"])
        return core_schema.union_schema(
            [choices["text"], choices["data"], file], mode="left_to_right"
        )
    copied = _copied(schema, lambda inner: _reader(inner, alone))
    if kind == "model-fields":
        model = schema["model_name"]
        if alone and model == "MessageSendParams":
            copied["extra_behavior"] = "forbid"
        for name, field in copied["fields"].items():
            copied["fields"][name] = {
                **field,
                "schema": _field_reader(model, name, field["schema"]),
            }
    return copied


def _field_reader(model: str, name: str, schema: Schema) -> Schema:
    if name == "kind":
        return _constant(schema["default"])
    inner = _innermost(schema)
    if model == "MessageSendParams" and name == "configuration":
        read = core_schema.no_info_before_validator_function(configuration_from_v1, inner)
        return _rewrapped(schema, dict(read))
    if model == "Message" and name == "message_id":
        return {"type": "default", "default": "", "schema": schema}
    if schema["type"] == "default" and inner["type"] in ("str", "list"):
        return _rewrapped(schema, {**inner, "min_length": 1})  # "" and [] are unset
    return schema


_SEND_PARAMS = _reader(MessageSendParams.__pydantic_core_schema__)
SEND_PARAMS = SchemaValidator(_SEND_PARAMS, _use_prebuilt=False)
"""A ``SendMessageRequest`` (parsed ProtoJSON, or bytes) in its plain form, read into
``MessageSendParams``. Raises pydantic's ``ValidationError`` for anything else."""


def plain_send_params(alone: bool = False) -> Schema:
    """The schema of ``SEND_PARAMS`` (``alone``: refusing any field but its own, the
    ``tenant`` among them), for a reader of a whole request (``parley._speedups``)."""
    return _reader(MessageSendParams.__pydantic_core_schema__, alone)  # type: ignore[no-any-return]
