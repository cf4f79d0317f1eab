"""Schema conformance of everything parley's JSON-RPC server emits.

``observe(app)`` wraps an ASGI app and checks each response as it leaves: JSON-RPC
bodies against the success response of the method called (or ``JSONRPCErrorResponse``),
every SSE ``data:`` line of a stream the same way, and agent cards against
``AgentCard``. Violations are collected, not raised mid-response; the autouse fixture in
``conftest.py`` fails the test that produced them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

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
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


class Observations:
    def __init__(self) -> None:
        self.checked = 0
        self.violations: list[str] = []

    def check(self, definition: str, payload: Any) -> None:
        self.checked += 1
        try:
            validate_wire(definition, payload)
        except AssertionError as error:
            self.violations.append(str(error))


def check_jsonrpc(observations: Observations, method: str | None, payload: Any) -> None:
    if isinstance(payload, dict) and "error" in payload:
        observations.check("JSONRPCErrorResponse", payload)
    elif method in SUCCESS_DEFINITION:
        observations.check(SUCCESS_DEFINITION[method], payload)


async def observe(app: ASGIApp, scope: Scope, receive: Any, send: Any, seen: Observations) -> None:
    """Run ``app`` for one call, checking what it sends."""
    if scope["type"] != "http":
        await app(scope, receive, send)
        return
    request_body: list[bytes] = []
    response_body: list[bytes] = []
    content_type = b""

    async def receive_and_keep() -> Any:
        message = await receive()
        if message["type"] == "http.request":
            request_body.append(message.get("body", b""))
        return message

    async def send_and_keep(message: dict[str, Any]) -> None:
        nonlocal content_type
        if message["type"] == "http.response.start":
            content_type = dict(message.get("headers", ())).get(b"content-type", b"")
        elif message["type"] == "http.response.body":
            response_body.append(message.get("body", b""))
        await send(message)

    try:
        await app(scope, receive_and_keep, send_and_keep)
    finally:
        _check_call(seen, scope, b"".join(request_body), b"".join(response_body), content_type)


def _check_call(
    seen: Observations, scope: Scope, request: bytes, response: bytes, content_type: bytes
) -> None:
    path = scope["path"]
    if path.endswith(CARD_PATHS):
        if response:
            seen.check("AgentCard", json.loads(response))
        return
    try:
        method = json.loads(request).get("method") if request else None
    except (ValueError, AttributeError):
        method = None
    if content_type.startswith(b"text/event-stream"):
        for line in response.split(b"\n"):
            if line.startswith(b"data:"):
                check_jsonrpc(seen, method, json.loads(line[5:]))
    elif content_type.startswith(b"application/json") and response and scope["method"] == "POST":
        payload = json.loads(response)
        if isinstance(payload, dict) and payload.get("jsonrpc") == "2.0":
            check_jsonrpc(seen, method, payload)
