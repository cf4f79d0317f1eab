"""v0.3's HTTP+JSON dialect (spec 3.2.3, 3.5.6): paths under ``/v1/``, proto-JSON bodies.

Each request becomes the proto request message of its operation (path parameters into
``name``/``parent``, the body parsed as proto-JSON), then the params model through the
shared converters of this package; results go back out as proto-JSON. That is the wire
the official SDKs' REST clients and servers speak. Errors answer with the error class's
HTTP status and one body for every error::

    {"code": -32001, "message": "Task t1 was not found", "data": ...}

``message`` is what the official SDK's REST server sends; ``code`` lets a client rebuild
the exact A2A error class.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from parley.protocol._errors import (
    A2AError,
    ConversionError,
    InvalidParamsError,
    JSONParseError,
)
from parley.protocol._operations import LIST_TASKS, OPERATIONS, Operation
from parley.protocol._rest import RESTDialect, RESTRoute
from parley.protocol._v0_3 import V0_3_NAMES
from parley.protocol._versions import V0_3
from parley.protocol.protobuf import PROTO_OPERATIONS, from_json, pb, to_json
from parley.protocol.protobuf._core import config_name, task_name, task_to_proto
from parley.protocol.v1 import BY_V1_NAME, decode_request

_BOOLEANS: dict[str, Any] = {"true": True, "false": False}


def _decoder(operation: Operation) -> Callable[[dict[str, str], str, bytes], tuple[Any, None]]:
    def decode(path: dict[str, str], query: str, body: bytes) -> tuple[Any, None]:
        return decode_params(operation, path, _query(query), body), None

    return decode


def decode_params(
    operation: Operation, path: dict[str, str], query: dict[str, str], body: bytes
) -> Any:
    """The params model of ``operation`` from the path, the query and the body."""
    if operation is LIST_TASKS:
        # v0.3's table has GET /v1/tasks but its proto no message: the query is read as
        # v1.0's ListTasksRequest (the same camelCase names)
        wanted = {k: _BOOLEANS.get(v, v) for k, v in query.items() if k != "A2A-Version"}
        return decode_request(BY_V1_NAME[LIST_TASKS.name], wanted)
    proto_op = PROTO_OPERATIONS[operation.name]
    if operation.name == "get_extended_card":
        return None
    takes_body = V0_3_NAMES[operation.name].rest_method == "POST" and body.strip()
    request = _parse_body(body, proto_op.request) if takes_body else proto_op.request()
    task_id = path.get("id")
    if task_id is not None:
        fields = request.DESCRIPTOR.fields_by_name
        if "name" in fields:
            request.name = (
                config_name(task_id, path.get("config_id"))
                if path.get("config_id")
                else task_name(task_id)
            )
        if "parent" in fields:
            request.parent = task_name(task_id)
    if operation.name == "set_push_config" and not request.HasField("config"):
        # a bare TaskPushNotificationConfig body, as some clients send
        request.config.CopyFrom(from_json(body, pb.TaskPushNotificationConfig))
    params = proto_op.params_from_proto(request)
    history_length = query.get("historyLength")
    if history_length is not None and hasattr(params, "history_length"):
        params.history_length = _integer("historyLength", history_length)
    return params


def _parse_body(body: bytes, message_class: Any) -> Any:
    """The body as ``message_class``; a body that is not JSON at all is a parse error
    (-32700, as over JSON-RPC: spec 3.4.1, 8.1), one that does not fit is invalid params."""
    try:
        return from_json(body, message_class)
    except ConversionError:
        try:
            json.loads(body)
        except ValueError as error:
            raise JSONParseError.from_decode(error) from None
        except RecursionError:
            raise InvalidParamsError.too_deep() from None
        raise


def _encoder(operation: Operation) -> Callable[[Any], bytes]:
    if operation is LIST_TASKS:  # v0.3.0 §7.3.x REST: ``[Task]``, one page
        return lambda result: b"[%s]" % b",".join(to_json(task_to_proto(t)) for t in result.tasks)
    if operation.name == "get_extended_card":
        # the official SDK serves the card in its JSON-schema form here, not proto-JSON
        return _model_json
    to_proto = PROTO_OPERATIONS[operation.name].result_to_proto
    return lambda result: to_json(to_proto(result))


def _model_json(result: Any) -> bytes:
    data: bytes = result.to_json()
    return data


def _query(raw: str) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(raw).items()}


def _integer(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InvalidParamsError(f"{name} must be a whole number") from None


def _status(error: A2AError) -> int:
    return error.http_status


def _route(operation: Operation, method: str | None = None) -> RESTRoute:
    names = V0_3_NAMES[operation.name]
    return RESTRoute(
        operation,
        method or names.rest_method,
        names.rest_path,
        _decoder(operation),
        _encoder(operation),
    )


REST_V0_3 = RESTDialect(
    version=V0_3,
    routes=(
        *(_route(operation) for operation in (*OPERATIONS, LIST_TASKS)),
        # the official SDK subscribes with GET
        *(_route(operation, "GET") for operation in OPERATIONS if operation.name == "resubscribe"),
    ),
    encode_error=A2AError.body,
    status=_status,
    media_type=b"application/json",
    prefix="/v1/",
)
"""A2A v0.3.0 over HTTP+JSON: the paths of v0.3's table (``_v0_3``) and the proto-JSON of
``a2a.proto``."""
