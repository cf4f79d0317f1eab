"""Schema conformance of everything parley's JSON-RPC server emits.

``observe(app, ...)`` wraps one ASGI call and checks the response as it leaves:

- on the JSON-RPC path, every response must be a JSON-RPC 2.0 response, as
  ``application/json`` or as an SSE stream whose every ``data:`` is one; a success must
  match the success response of the method called, an error ``JSONRPCErrorResponse``;
  the ``id`` must echo the request's (``null`` only when the request's was unreadable),
  and SSE ``id:`` sequence numbers must rise;
- agent cards (both well-known paths) must be valid ``AgentCard`` objects;
- A2A v1.0 answers (JSON-RPC methods ``SendMessage``..., and the HTTP+JSON paths without
  ``/v1``) must parse as ProtoJSON of the normative v1.0.1 proto's response message with
  unknown fields rejected; their errors must carry a ``google.rpc.ErrorInfo`` of the
  domain ``a2a-protocol.org`` (v1.0.1 §9.5, §11.6) that parses the same way.

Requests in another dialect (an ``A2A-Version`` other than 0.3, a 2025-early method, or a
shared method with 2025-early's ``sessionId``; the rule of docs/dialect-2025-early.md,
spelled out here independently of parley's code) are checked only as JSON-RPC
envelopes that echo the request's ``id``: their shapes are not v0.3's, and their own
tests check them exactly.

Violations are collected, never raised mid-response. ``conftest.py`` installs the
observer on ``A2AApp`` for the whole session, so apps served by module- or
session-scoped fixtures are observed too, and fails the test during which (or just
after which) a violation was seen.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from google.protobuf import json_format
from google.rpc import error_details_pb2

from parley.protocol.v1 import BY_V1_JSONRPC_METHOD, BY_V1_NAME, V1Operation
from parley.protocol.v1._rest import REST_V1_0
from parley.server.bindings._rest import route as rest_route
from tests.schema import validate_wire

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]

SUCCESS_DEFINITION = {
    "message/send": "SendMessageSuccessResponse",
    "message/stream": "SendStreamingMessageSuccessResponse",
    "tasks/resubscribe": "SendStreamingMessageSuccessResponse",
    "tasks/get": "GetTaskSuccessResponse",
    "tasks/cancel": "CancelTaskSuccessResponse",
    "tasks/pushNotificationConfig/set": "SetTaskPushNotificationConfigSuccessResponse",
    "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfigSuccessResponse",
    "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigSuccessResponse",
    "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfigSuccessResponse",
    "agent/getAuthenticatedExtendedCard": "GetAuthenticatedExtendedCardSuccessResponse",
}
STREAMING_METHODS = frozenset({"message/stream", "tasks/resubscribe"})
EARLY_METHODS = frozenset(
    {
        "agent/getCard",
        "tasks/send",
        "tasks/sendSubscribe",
        "tasks/pushNotification/set",
        "tasks/pushNotification/get",
    }
)
SHARED_METHODS = frozenset({"tasks/get", "tasks/cancel", "tasks/resubscribe"})
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
_UNREADABLE = object()


class Observations:
    """Everything checked so far, and what failed."""

    def __init__(self) -> None:
        self.checked = 0
        self.violations: list[str] = []
        self.reported = 0

    def check(self, definition: str, payload: Any) -> None:
        self.checked += 1
        try:
            validate_wire(definition, payload)
        except AssertionError as error:
            self.violations.append(str(error))

    def violation(self, text: str) -> None:
        self.checked += 1
        self.violations.append(text)

    def unreported(self) -> list[str]:
        """Violations not yet handed out by an earlier call."""
        new = self.violations[self.reported :]
        self.reported = len(self.violations)
        return new


class _Call:
    """What one HTTP call carried: the request, the response status, headers and body."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.request: list[bytes] = []
        self.response: list[bytes] = []
        self.status = 0
        self.content_type = b""


async def observe(
    app: ASGIApp,
    scope: Scope,
    receive: Any,
    send: Any,
    seen: Observations,
    rpc_path: str | None = None,
) -> None:
    """Run ``app`` for one call, checking what it sends.

    ``rpc_path`` is the path of the JSON-RPC binding: everything answered there must be
    JSON-RPC. Without it, a POST answered with a ``"jsonrpc"`` object is checked as one.
    """
    if scope["type"] != "http":
        await app(scope, receive, send)
        return
    call = _Call(scope)

    async def receive_and_keep() -> Any:
        message = await receive()
        if message["type"] == "http.request":
            call.request.append(message.get("body", b""))
        return message

    async def send_and_keep(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            call.status = message["status"]
            call.content_type = dict(message.get("headers", ())).get(b"content-type", b"")
        elif message["type"] == "http.response.body":
            call.response.append(message.get("body", b""))
        await send(message)

    try:
        await app(scope, receive_and_keep, send_and_keep)
    finally:
        if call.status:
            check_call(seen, call, rpc_path)


def check_call(seen: Observations, call: _Call, rpc_path: str | None) -> None:
    path = call.scope["path"]
    response = b"".join(call.response)
    if path.endswith(CARD_PATHS):
        if call.status == 200:
            _check_card(seen, call, path, response)
        return
    if not path.startswith("/v1/") and _route_path(call.scope) != rpc_path:
        found = rest_route(REST_V1_0, _route_path(call.scope))
        chosen = found[0].get(call.scope["method"]) if found else None
        if chosen is not None:
            check_v1_rest(seen, BY_V1_NAME[chosen.operation.name], call, response)
        return
    on_rpc_path = rpc_path is not None and _route_path(call.scope) == rpc_path
    if call.scope["method"] != "POST" or not (on_rpc_path or rpc_path is None):
        return
    request = _request(b"".join(call.request))
    if not speaks_v0_3(call.scope, request):
        request = _OtherDialect(request)
    if call.content_type.startswith(b"text/event-stream"):
        _check_sse(seen, request, response)
    elif call.content_type.startswith(b"application/json"):
        try:
            payload = json.loads(response)
        except ValueError:
            seen.violation(f"JSON-RPC answer is not JSON: {response[:300]!r}")
            return
        if on_rpc_path or (isinstance(payload, dict) and "jsonrpc" in payload):
            check_jsonrpc(seen, request, payload)
    elif on_rpc_path:
        seen.violation(
            f"JSON-RPC answer has content-type {call.content_type!r} (status {call.status}); "
            "spec 3.2.1 allows application/json or text/event-stream"
        )


def _check_sse(seen: Observations, request: Any, response: bytes) -> None:
    last_id: int | None = None
    for block in response.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [line[5:].strip() for line in block.split(b"\n") if line.startswith(b"data:")]
        ids = [line[3:].strip() for line in block.split(b"\n") if line.startswith(b"id:")]
        if not data:
            continue
        if ids:
            try:
                event_id = int(ids[0])
            except ValueError:
                seen.violation(f"SSE id is not a sequence number: {ids[0]!r}")
            else:
                if last_id is not None and event_id <= last_id:
                    seen.violation(f"SSE ids do not rise: {event_id} after {last_id}")
                last_id = event_id
        try:
            payload = json.loads(b"\n".join(data))
        except ValueError:
            seen.violation(f"SSE data is not JSON: {block[:300]!r}")
            continue
        check_jsonrpc(seen, request, payload)


class _OtherDialect(dict[str, Any]):
    """A request in another dialect than v0.3: only its envelope is checked."""


def _check_card(seen: Observations, call: _Call, path: str, response: bytes) -> None:
    """The card at a well-known path: v1.0's AgentCard, strictly, to a request asking for
    1.0 at agent-card.json; else the v0.3 card of a2a.json."""
    if _asks_v1(call.scope) and path.endswith(CARD_PATHS[0]):
        check_proto_json(seen, BY_V1_NAME["get_extended_card"], json.loads(response))
    else:
        _check_json(seen, "AgentCard", response, f"card at {path}")


def _version_asked(scope: Scope) -> str:
    headers = {name.lower(): value for name, value in scope.get("headers", ())}
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    version: str = (
        headers.get(b"a2a-version", b"").decode("latin-1") or query.get("A2A-Version", [""])[0]
    )
    return version


def _asks_v1(scope: Scope) -> bool:
    """Whether a request asks for A2A 1.0 (its card is then v1.0's AgentCard)."""
    return _version_asked(scope).strip().startswith("1.")


def speaks_v0_3(scope: Scope, request: Any) -> bool:
    """Whether a JSON-RPC request is a v0.3 one (see the module docs)."""
    if not isinstance(request, dict):
        return True
    version = _version_asked(scope)
    if version:
        return version.strip() == "0.3"
    method = request.get("method")
    params = request.get("params")
    if method in EARLY_METHODS:
        return False
    return not (method in SHARED_METHODS and isinstance(params, dict) and "sessionId" in params)


def check_jsonrpc(seen: Observations, request: Any, payload: Any) -> None:
    """Check one JSON-RPC response against the request it answers."""
    method = request.get("method") if isinstance(request, dict) else None
    refused_version = (
        isinstance(payload, dict) and (payload.get("error") or {}).get("code") == -32009
    )
    # a refused A2A-Version chose no dialect: that answer is in the default (v0.3) form
    if method in BY_V1_JSONRPC_METHOD and isinstance(payload, dict) and not refused_version:
        if "error" in payload:
            error = payload["error"]
            check_v1_error(seen, error.get("data") if isinstance(error, dict) else None)
            seen.check("JSONRPCErrorResponse", {**payload, "error": {**error, "data": None}})
        else:
            check_proto_json(seen, BY_V1_JSONRPC_METHOD[method], payload.get("result"))
        _check_id(seen, request, payload)
        return
    if isinstance(request, _OtherDialect):
        if not isinstance(payload, dict) or payload.get("jsonrpc") != "2.0":
            seen.violation(f"not a JSON-RPC 2.0 response: {payload!r:.300}")
        elif ("result" in payload) == ("error" in payload):
            seen.violation(f"a response needs exactly one of result and error: {payload!r:.300}")
        else:
            seen.checked += 1
    elif isinstance(payload, dict) and "error" in payload:
        seen.check("JSONRPCErrorResponse", payload)
    elif method in SUCCESS_DEFINITION:
        seen.check(SUCCESS_DEFINITION[method], payload)
    else:
        seen.violation(f"a success answer to a request with method {method!r}: {payload!r:.300}")
    if isinstance(payload, dict):
        _check_id(seen, request, payload)


def _check_id(seen: Observations, request: Any, payload: dict[str, Any]) -> None:
    answered = payload.get("id", _UNREADABLE)
    if request is _UNREADABLE or not isinstance(request, dict) or "id" not in request:
        if answered is not None and "error" in payload:
            seen.violation(f"an error to an unreadable request must have id null, not {answered!r}")
        return
    wanted = request["id"]
    valid_id = not isinstance(wanted, bool) and isinstance(wanted, str | int | None)
    if valid_id and answered != wanted:
        seen.violation(f"response id {answered!r} does not echo the request id {wanted!r}")


def _check_json(seen: Observations, definition: str, body: bytes, where: str) -> None:
    try:
        payload = json.loads(body)
    except ValueError:
        seen.violation(f"{where} is not JSON: {body[:300]!r}")
        return
    seen.check(definition, payload)


def _request(body: bytes) -> Any:
    try:
        return json.loads(body) if body else _UNREADABLE
    except (ValueError, RecursionError):  # the server's answer to these is checked too
        return _UNREADABLE


def _route_path(scope: Scope) -> str:
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        return path[len(root) :] or "/"
    return path


def check_proto_json(seen: Observations, operation: V1Operation, payload: Any) -> None:
    """``payload`` must be ProtoJSON of the operation's response, nothing unknown in it."""
    seen.checked += 1
    try:
        json_format.ParseDict(payload, operation.response(), ignore_unknown_fields=False)
    except (json_format.ParseError, TypeError, AttributeError) as error:
        seen.violations.append(
            f"v1.0 {operation.jsonrpc_method} answer is not ProtoJSON of "
            f"{operation.response.DESCRIPTOR.full_name}: {error}: {payload!r:.300}"
        )


def check_v1_error(seen: Observations, details: Any) -> None:
    """A v1.0 error's details: a list holding an A2A ``google.rpc.ErrorInfo``."""
    seen.checked += 1
    infos = [
        item
        for item in (details if isinstance(details, list) else ())
        if isinstance(item, dict) and item.get("@type", "").endswith("google.rpc.ErrorInfo")
    ]
    if not infos:
        seen.violations.append(f"a v1.0 error without a google.rpc.ErrorInfo: {details!r:.300}")
        return
    for info in infos:
        body = {key: value for key, value in info.items() if key != "@type"}
        try:
            parsed = json_format.ParseDict(body, error_details_pb2.ErrorInfo())
        except json_format.ParseError as error:
            seen.violations.append(f"ErrorInfo does not parse: {error}: {info!r}")
            continue
        if parsed.domain != "a2a-protocol.org" or not parsed.reason.isupper():
            seen.violations.append(f"ErrorInfo is not A2A's (v1.0.1 §10.6): {info!r}")


def check_v1_rest(seen: Observations, operation: V1Operation, call: _Call, body: bytes) -> None:
    if call.status == 304:  # not modified: no body (RFC 9110 §15.4.5)
        return
    if call.content_type.startswith(b"text/event-stream"):
        for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
            data = [line[5:].strip() for line in block.split(b"\n") if line.startswith(b"data:")]
            if data:
                _check_v1_body(seen, operation, b"\n".join(data), block.startswith(b"event: error"))
        return
    _check_v1_body(seen, operation, body, call.status >= 300)


def _check_v1_body(seen: Observations, operation: V1Operation, body: bytes, error: bool) -> None:
    try:
        payload = json.loads(body)
    except ValueError:
        seen.violation(f"v1.0 HTTP+JSON answer is not JSON: {body[:300]!r}")
        return
    if error:
        status = payload.get("error") if isinstance(payload, dict) else None
        if not isinstance(status, dict) or not isinstance(status.get("code"), int):
            seen.violation(f"v1.0 HTTP+JSON error is not a google.rpc.Status: {payload!r:.300}")
            return
        check_v1_error(seen, status.get("details"))
        return
    check_proto_json(seen, operation, payload)
