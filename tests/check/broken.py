"""A deliberately broken A2A agent (v0.3, JSON-RPC), a plain ASGI app: each of its
faults is one the checks must find, each named where it is made."""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio

Scope = dict[str, Any]

FAULTS = {
    "envelope.parse-error": "a body that is not JSON is an HTTP 500 in plain text",
    "envelope.invalid-request": "a request without a method is -32601",
    "envelope.invalid-params": "a message that is not an object is -32603",
    "envelope.message-id-required": "a message without messageId is taken",
    "envelope.task-not-found": "an unknown task is -32602",
    "tasks.get-not-found": "(the same)",
    "envelope.content-type": "a text/plain body is taken",
    "tasks.history-length": "historyLength is ignored",
    "tasks.cancel-ended": "a completed task is canceled again",
    "stream.not-declared": "streaming, not declared, is -32603",
    "push.not-declared": "push configs, not declared, are -32603",
    "card.no-extended-card": "the extended card, not declared, is -32603",
}
"""The checks this agent fails, and why."""


class BrokenAgent:
    """``slow``: seconds every ``tasks/get`` takes to answer; ``push``: declare push
    notifications (and never send one); ``secured``: declare security (a requirement
    naming a scheme it does not declare), a bogus signature, and serve everyone."""

    def __init__(self, *, slow: float = 0.0, push: bool = False, secured: bool = False) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}
        self.slow = slow
        self.push = push
        self.secured = secured

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return await _lifespan(receive, send)
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        host = dict(scope["headers"]).get(b"host", b"agent.local").decode()
        if scope["method"] == "GET" and scope["path"] == "/.well-known/agent-card.json":
            card = _card(f"http://{host}/", push=self.push)
            if self.secured:
                card.update(_SECURED)
            return await _answer(send, 200, card)
        if scope["method"] == "POST" and scope["path"] == "/":
            return await self._rpc(send, body)
        await _answer(send, 404, {"detail": "not found"})

    async def _rpc(self, send: Any, body: bytes) -> None:
        try:
            request = json.loads(body)
        except ValueError:
            return await _answer(send, 500, "oops", "text/plain")
        rid = request.get("id")
        if "method" not in request:
            return await _answer(send, 200, _error(rid, -32601, "no method"))
        method, params = request["method"], request.get("params") or {}
        if method == "message/send":
            message = params.get("message")
            if not isinstance(message, dict):
                return await _answer(send, 200, _error(rid, -32603, "internal error"))
            task = self._new_task(message)
            return await _answer(send, 200, {"jsonrpc": "2.0", "id": rid, "result": task})
        if method == "tasks/get" and self.slow:
            await anyio.sleep(self.slow)
        if method in ("tasks/get", "tasks/cancel"):
            known = self.tasks.get(str(params.get("id")))
            if known is None:
                code = -32602 if method == "tasks/get" else -32001
                return await _answer(send, 200, _error(rid, code, "no such task"))
            if method == "tasks/cancel":
                known["status"] = {"state": "canceled"}
            return await _answer(send, 200, {"jsonrpc": "2.0", "id": rid, "result": known})
        if method in _UNSUPPORTED:
            return await _answer(send, 200, _error(rid, -32603, "internal error"))
        await _answer(send, 200, _error(rid, -32601, "Method not found"))

    def _new_task(self, message: dict[str, Any]) -> dict[str, Any]:
        task_id, context_id = uuid.uuid4().hex, uuid.uuid4().hex
        reply = {"kind": "message", "role": "agent", "messageId": uuid.uuid4().hex,
                 "parts": [{"kind": "text", "text": "ok"}]}  # fmt: skip
        task = {
            "kind": "task", "id": task_id, "contextId": context_id,
            "status": {"state": "completed"},
            "history": [{**message, "messageId": message.get("messageId", "")}, reply, reply],
        }  # fmt: skip
        self.tasks[task_id] = task
        return task


_UNSUPPORTED = {
    "message/stream",
    "tasks/resubscribe",
    "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
    "agent/getAuthenticatedExtendedCard",
}


_SECURED = {
    "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-API-Key"}},
    "security": [{"oauth": []}],
    "signatures": [{"protected": "eyJhbGciOiJFUzI1NiIsImtpZCI6Im5vbmUifQ", "signature": "AAAA"}],
}


def _card(url: str, *, push: bool = False) -> dict[str, Any]:
    return {
        "name": "broken agent", "description": "Fails the checks it should.", "url": url,
        "version": "1.0.0", "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": False, "pushNotifications": push},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": ["echo"]}],
    }  # fmt: skip


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


async def _answer(send: Any, status: int, body: Any, kind: str = "application/json") -> None:
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(content)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
