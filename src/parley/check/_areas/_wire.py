"""What the checks send raw, per version and binding, and what they expect back.

The expected JSON-RPC codes are JSON-RPC 2.0's and A2A's (v0.3.0 §8; v1.0.1 §5.4);
the HTTP statuses and gRPC codes are v1.0.1 §5.4's. v0.3.0 ties no HTTP status or gRPC
code to most errors (§3.2.3 asks only that they correspond), so on a v0.3 surface the
checks ask for a 4xx status (404 for a task not found) and any non-OK gRPC code
(``NOT_FOUND`` for a task not found).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

import httpx

from parley.check._model import GRPC, JSONRPC, REST, Failed
from parley.check._probe import Probe


@dataclass(frozen=True, slots=True)
class Expected:
    name: str
    code: int
    http: int
    grpc: str


TASK_NOT_FOUND = Expected("TaskNotFoundError", -32001, 404, "NOT_FOUND")
TASK_NOT_CANCELABLE = Expected("TaskNotCancelableError", -32002, 400, "FAILED_PRECONDITION")
PUSH_NOT_SUPPORTED = Expected(
    "PushNotificationNotSupportedError", -32003, 400, "FAILED_PRECONDITION"
)
UNSUPPORTED = Expected("UnsupportedOperationError", -32004, 400, "FAILED_PRECONDITION")
VERSION_NOT_SUPPORTED = Expected("VersionNotSupportedError", -32009, 400, "FAILED_PRECONDITION")
PARSE_ERROR = Expected("JSONParseError", -32700, 400, "INVALID_ARGUMENT")
INVALID_REQUEST = Expected("InvalidRequestError", -32600, 400, "INVALID_ARGUMENT")
METHOD_NOT_FOUND = Expected("MethodNotFoundError", -32601, 404, "UNIMPLEMENTED")
INVALID_PARAMS = Expected("InvalidParamsError", -32602, 400, "INVALID_ARGUMENT")


def unknown_task_id() -> str:
    return f"a2a-check-no-such-task-{uuid.uuid4().hex}"


def method(probe: Probe, operation: str) -> str:
    """The JSON-RPC method of ``operation`` in the probe's version."""
    if probe.v1:
        from parley.protocol.v1 import BY_V1_NAME

        return BY_V1_NAME[operation].jsonrpc_method
    from parley.protocol import BY_NAME

    return BY_NAME[operation].jsonrpc_method


def rest_path(probe: Probe, operation: str, **fields: str) -> tuple[str, str]:
    """The HTTP method and path of ``operation`` in the probe's version."""
    if probe.v1:
        from parley.protocol.v1 import BY_V1_NAME

        row: Any = BY_V1_NAME[operation]
    else:
        from parley.protocol import BY_NAME

        row = BY_NAME[operation]
    return row.rest_method, row.rest_path.format(**fields)


def rpc(probe: Probe, operation: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method(probe, operation), "params": params}


def message_json(probe: Probe, text: str, **fields: Any) -> dict[str, Any]:
    """A user message with one text part, in the probe's version's JSON."""
    if probe.v1:
        message: dict[str, Any] = {"role": "ROLE_USER", "parts": [{"text": text}]}
    elif probe.surface is not None and probe.binding == REST:  # a2a.proto's JSON in v0.3
        message = {"role": "ROLE_USER", "content": [{"text": text}]}
    else:
        message = {"kind": "message", "role": "user", "parts": [{"kind": "text", "text": text}]}
    message["messageId"] = uuid.uuid4().hex
    message.update(fields)
    return {k: v for k, v in message.items() if v is not None}


def task_query(probe: Probe, task_id: str) -> dict[str, Any]:
    return {"id": task_id}


def grpc_get_task(probe: Probe, task_id: str) -> bytes:
    if probe.v1:
        from parley._proto.v1 import a2a_v1_pb2

        return bytes(a2a_v1_pb2.GetTaskRequest(id=task_id).SerializeToString())
    from parley._proto import a2a_pb2

    return bytes(a2a_pb2.GetTaskRequest(name=f"tasks/{task_id}").SerializeToString())


def grpc_send(probe: Probe, text: str, message_id: str) -> bytes:
    if probe.v1:
        from parley._proto.v1 import a2a_v1_pb2 as v1

        message: Any = v1.Message(message_id=message_id, role=v1.ROLE_USER)
        message.parts.add(text=text)
        return bytes(v1.SendMessageRequest(message=message).SerializeToString())
    from parley._proto import a2a_pb2 as v03

    message = v03.Message(message_id=message_id, role=v03.ROLE_USER)
    message.content.add(text=text)
    return bytes(v03.SendMessageRequest(request=message).SerializeToString())


def jsonrpc_error(response: httpx.Response, expected: Expected) -> None:
    """``Failed`` unless ``response`` is a JSON-RPC error with ``expected``'s code."""
    try:
        body = json.loads(response.content)
    except ValueError:
        raise Failed(f"expected a JSON-RPC error {expected.code}; the body is not JSON") from None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or error.get("code") != expected.code:
        raise Failed(
            f"expected a JSON-RPC error {expected.code} ({expected.name}); got {_what(body)}"
        )
    if not isinstance(error.get("message"), str):
        raise Failed("the JSON-RPC error has no message (JSON-RPC 2.0 §5.1)")


def rest_error(probe: Probe, response: httpx.Response, expected: Expected) -> None:
    """``Failed`` unless ``response`` is an HTTP error as ``expected`` (see the module)."""
    status = response.status_code
    if probe.v1 or expected is TASK_NOT_FOUND:
        if status != expected.http:
            raise Failed(f"expected HTTP {expected.http} ({expected.name}); got {status}")
    elif not 400 <= status < 500:
        raise Failed(f"expected an HTTP 4xx status ({expected.name}); got {status}")
    if "json" not in response.headers.get("content-type", ""):
        raise Failed(
            f"HTTP {status} error without a JSON body (content-type "
            f"{response.headers.get('content-type')!r})"
        )


def grpc_error(probe: Probe, code: str, expected: Expected) -> None:
    if probe.v1 or expected in (TASK_NOT_FOUND, METHOD_NOT_FOUND):
        if code != expected.grpc:
            raise Failed(f"expected gRPC status {expected.grpc} ({expected.name}); got {code}")
    elif code == "OK":
        raise Failed(f"expected a gRPC error ({expected.name}); the call succeeded")


async def get_unknown_task(probe: Probe, task_id: str, *, anonymous: bool = False) -> Any:
    """Ask for ``task_id`` raw over the probe's binding; the response (HTTP) or answer."""
    if probe.binding == JSONRPC:
        return await probe.jsonrpc(
            rpc(probe, "get_task", task_query(probe, task_id)), anonymous=anonymous
        )
    if probe.binding == REST:
        verb, path = rest_path(probe, "get_task", id=task_id)
        return await probe.rest(verb, path, anonymous=anonymous)
    assert probe.binding == GRPC
    return await probe.grpc("GetTask", grpc_get_task(probe, task_id), anonymous=anonymous)


def _what(body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        return f"error {error.get('code')}: {error.get('message')}"
    if isinstance(body, dict) and "result" in body:
        return "a result"
    return "no JSON-RPC response"
