"""The envelope: malformed requests, unknown methods, invalid params, unsupported
versions and content types get the binding's error (code, HTTP status, gRPC status)."""

from __future__ import annotations

import json
import uuid

import httpx

from parley.check._areas._wire import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    TASK_NOT_FOUND,
    VERSION_NOT_SUPPORTED,
    Expected,
    get_unknown_task,
    grpc_error,
    grpc_get_task,
    grpc_send,
    jsonrpc_error,
    message_json,
    rest_error,
    rest_path,
    rpc,
    unknown_task_id,
)
from parley.check._model import EARLY, GRPC, JSONRPC, REST, V0_3, V1_0, Failed, Level, Needs, check
from parley.check._probe import GrpcAnswer, Probe

_HTTP = (JSONRPC, REST)
_ALL_VERSIONS = (V1_0, V0_3, EARLY)


@check(
    "envelope.parse-error",
    "A body that is not JSON is a parse error",
    Level.must,
    v03="8.1",
    v10="9.5",
    needs=Needs(versions=_ALL_VERSIONS, bindings=_HTTP),
)
async def parse_error(probe: Probe) -> None:
    broken = b'{"jsonrpc": "2.0", "id": 1, "method": '
    if probe.binding == JSONRPC:
        response = await probe.jsonrpc(broken)
        jsonrpc_error(response, PARSE_ERROR)
        answer = json.loads(response.content)
        if "id" not in answer:
            raise Failed("the parse error has no id (JSON-RPC 2.0 §5: it is null)")
        if answer["id"] is not None:
            raise Failed(f"the parse error's id is {answer['id']!r} (JSON-RPC 2.0 §5: null)")
        return
    verb, path = rest_path(probe, "send_message")
    rest_error(probe, await probe.rest(verb, path, broken), PARSE_ERROR)


@check(
    "envelope.invalid-request",
    "A JSON-RPC request without a method is an invalid request",
    Level.must,
    v03="8.1",
    v10="9.5",
    needs=Needs(versions=_ALL_VERSIONS, bindings=(JSONRPC,)),
)
async def invalid_request(probe: Probe) -> None:
    response = await probe.jsonrpc({"jsonrpc": "2.0", "id": 1, "params": {}})
    jsonrpc_error(response, INVALID_REQUEST)


@check(
    "envelope.method-not-found",
    "An unknown method is method-not-found (gRPC: UNIMPLEMENTED)",
    Level.must,
    v03="8.1",
    v10="9.5",
    needs=Needs(versions=_ALL_VERSIONS, bindings=(JSONRPC, GRPC)),
)
async def method_not_found(probe: Probe) -> None:
    if probe.binding == JSONRPC:
        body = {"jsonrpc": "2.0", "id": 1, "method": "a2a-check/no-such-method", "params": {}}
        jsonrpc_error(await probe.jsonrpc(body), METHOD_NOT_FOUND)
        return
    answer = await probe.grpc("NoSuchMethod", b"")
    grpc_error(probe, answer.code, METHOD_NOT_FOUND)


@check(
    "envelope.invalid-params",
    "A send whose message is not a Message is invalid params (HTTP 400)",
    Level.must,
    v03="8.1",
    v10="3.3.2",
    needs=Needs(bindings=_HTTP),
)
async def invalid_params(probe: Probe) -> None:
    params = {"message": "a2a-check: this is not a message"}
    if probe.binding == JSONRPC:
        jsonrpc_error(await probe.jsonrpc(rpc(probe, "send_message", params)), INVALID_PARAMS)
        return
    verb, path = rest_path(probe, "send_message")
    rest_error(probe, await probe.rest(verb, path, params), INVALID_PARAMS)


@check(
    "envelope.message-id-required",
    "A message without a messageId is refused as invalid params",
    Level.must,
    v03="6.4",
    v10="4.1.4",
)
async def message_id_required(probe: Probe) -> None:
    if probe.binding == GRPC:
        answer = await probe.grpc("SendMessage", grpc_send(probe, "a2a-check: no id", ""))
        grpc_error(probe, answer.code, INVALID_PARAMS)
        return
    message = message_json(probe, "a2a-check: no id")
    del message["messageId"]
    if probe.binding == JSONRPC:
        response = await probe.jsonrpc(rpc(probe, "send_message", {"message": message}))
        jsonrpc_error(response, INVALID_PARAMS)
        return
    verb, path = rest_path(probe, "send_message")
    rest_error(probe, await probe.rest(verb, path, {"message": message}), INVALID_PARAMS)


@check(
    "envelope.task-not-found",
    "A task that does not exist is TaskNotFoundError (-32001, HTTP 404, NOT_FOUND)",
    Level.must,
    v03="8.2",
    v10="5.4",
    needs=Needs(versions=_ALL_VERSIONS),
)
async def task_not_found(probe: Probe) -> None:
    answer = await get_unknown_task(probe, unknown_task_id())
    _expect(probe, answer, TASK_NOT_FOUND)


@check(
    "envelope.error-info",
    "An HTTP+JSON error carries a google.rpc.ErrorInfo naming the A2A error",
    Level.must,
    v10="11.6",
    needs=Needs(versions=(V1_0,), bindings=(REST,)),
)
async def error_info(probe: Probe) -> None:
    response = await get_unknown_task(probe, unknown_task_id())
    try:
        error = json.loads(response.content)["error"]
        details = error["details"]
    except (ValueError, KeyError, TypeError):
        raise Failed('the error body is not {"error": {..., "details": [...]}}') from None
    infos = [d for d in details if isinstance(d, dict) and d.get("@type", "").endswith("ErrorInfo")]
    if not infos:
        raise Failed("no google.rpc.ErrorInfo in error.details")
    if infos[0].get("reason") != "TASK_NOT_FOUND" or infos[0].get("domain") != "a2a-protocol.org":
        raise Failed(
            f"ErrorInfo {infos[0]}: expected reason TASK_NOT_FOUND, domain a2a-protocol.org"
        )


@check(
    "envelope.version-not-supported",
    "A request for an A2A-Version the agent does not speak is VersionNotSupportedError",
    Level.must,
    v10="3.6.2",
    needs=Needs(versions=(V1_0,)),
)
async def version_not_supported(probe: Probe) -> None:
    task_id = unknown_task_id()
    unknown = {"A2A-Version": "99.0"}
    if probe.binding == GRPC:
        answer = await probe.grpc("GetTask", grpc_get_task(probe, task_id), version="99.0")
        grpc_error(probe, answer.code, VERSION_NOT_SUPPORTED)
    elif probe.binding == JSONRPC:
        response = await probe.jsonrpc(rpc(probe, "get_task", {"id": task_id}), headers=unknown)
        jsonrpc_error(response, VERSION_NOT_SUPPORTED)
    else:
        verb, path = rest_path(probe, "get_task", id=task_id)
        rest_error(probe, await probe.rest(verb, path, headers=unknown), VERSION_NOT_SUPPORTED)


@check(
    "envelope.content-type",
    "A POST whose body is not declared JSON is refused, not run",
    Level.should,
    v03="3.2.1",
    v10="9.1",
    needs=Needs(bindings=_HTTP),
)
async def content_type(probe: Probe) -> None:
    message = message_json(probe, f"a2a-check: plain text body {uuid.uuid4().hex}")
    if probe.binding == JSONRPC:
        response = await probe.jsonrpc(
            rpc(probe, "send_message", {"message": message}), content_type="text/plain"
        )
        ran = response.status_code == 200 and "result" in _json(response)
    else:
        verb, path = rest_path(probe, "send_message")
        response = await probe.rest(verb, path, {"message": message}, content_type="text/plain")
        ran = response.is_success
    if ran:
        raise Failed("a body sent as text/plain was taken and run (a cross-site form can do this)")


@check(
    "envelope.a2a-json",
    "HTTP+JSON answers with Content-Type application/a2a+json",
    Level.should,
    v10="11.1",
    needs=Needs(versions=(V1_0,), bindings=(REST,)),
)
async def a2a_json(probe: Probe) -> None:
    response = await get_unknown_task(probe, unknown_task_id())
    kind = response.headers.get("content-type", "")
    if not kind.startswith("application/a2a+json"):
        raise Failed(f"Content-Type {kind!r}, not application/a2a+json")


def _expect(probe: Probe, answer: httpx.Response | GrpcAnswer, expected: Expected) -> None:
    if isinstance(answer, GrpcAnswer):
        grpc_error(probe, answer.code, expected)
    elif probe.binding == JSONRPC:
        jsonrpc_error(answer, expected)
    else:
        rest_error(probe, answer, expected)


def _json(response: httpx.Response) -> dict[str, object]:
    try:
        found = json.loads(response.content)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
