"""An agent of the earlier generation, written with nothing but Starlette, answering as
the 2025-early specification describes (an outside view of the dialect: no parley code on
this side).

It knows only 2025-early's methods (no ``tasks/resubscribe``, no v0.3). ``ask`` asks for a
city and the next message completes the task; ``slow`` stays ``working`` until
canceled; ``stream me`` streams two chunks of one artifact; anything else is echoed.
Every request body it receives is kept in ``seen``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

STAMP = "2025-04-01T10:00:00Z"


def text(role: str, value: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "text": value}]}


class EarlyPeer:
    def __init__(self) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}
        self.seen: list[dict[str, Any]] = []
        self.app = Starlette(
            routes=[
                Route("/.well-known/agent.json", self.card, methods=["GET"]),
                Route("/", self.rpc, methods=["POST"]),
            ]
        )

    async def card(self, request: Request) -> Response:
        return JSONResponse(
            {
                "name": "Old agent",
                "description": "An agent of the earlier generation.",
                "url": str(request.base_url),
                "provider": {"organization": "Old Org", "url": "https://old.example"},
                "version": "0.1.0",
                "capabilities": {
                    "streaming": True,
                    "pushNotifications": False,
                    "stateTransitionHistory": False,
                },
                "authentication": {"schemes": ["bearer"], "credentials": None},
                "defaultInputModes": ["text"],
                "defaultOutputModes": ["text"],
                "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": []}],
            }
        )

    async def rpc(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(None, -32700, "Parse error")
        self.seen.append(body)
        rid, method, params = body.get("id"), body.get("method"), body.get("params") or {}
        if method == "tasks/sendSubscribe":
            return StreamingResponse(self._stream(rid, params), media_type="text/event-stream")
        handler = {
            "tasks/send": self._send,
            "tasks/get": self._get,
            "tasks/cancel": self._cancel,
        }.get(method)
        if method in ("tasks/pushNotification/set", "tasks/pushNotification/get"):
            return _error(rid, -32003, "Push notification not supported")
        if handler is None:
            return _error(rid, -32601, "Method not found")
        try:
            return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": handler(params)})
        except _Failure as failure:
            return _error(rid, failure.code, failure.message)

    def _task(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self.tasks.get(params.get("id", ""))
        if task is None:
            raise _Failure(-32001, "Task not found")
        session = params.get("sessionId")
        if session is not None and session != task["sessionId"]:
            raise _Failure(-32002, "Session not found")
        return task

    def _send(self, params: dict[str, Any]) -> dict[str, Any]:
        said = params["message"]["parts"][0]["text"]
        task = self.tasks.get(params["id"])
        if task is None:
            task = self.tasks[params["id"]] = {
                "id": params["id"],
                "sessionId": params.get("sessionId"),
                "status": {"state": "created", "timestamp": STAMP},
                "history": [],
            }
        task["history"].append(params["message"])
        if said == "ask":
            task["status"] = {
                "state": "input-required",
                "message": text("agent", "Which city?"),
                "timestamp": STAMP,
            }
        elif said == "slow":
            task["status"] = {"state": "working", "timestamp": STAMP}
        else:
            task["status"] = {"state": "completed", "timestamp": STAMP}
            answer = f"Booked to {said}" if len(task["history"]) > 1 else f"Echo: {said}"
            task["artifacts"] = [{"parts": [{"type": "text", "text": answer}], "index": 0}]
        return task

    def _get(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._task(params)

    def _cancel(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self._task(params)
        task["status"] = {"state": "canceled", "timestamp": STAMP}
        return task

    async def _stream(self, rid: Any, params: dict[str, Any]) -> AsyncIterator[bytes]:
        task_id = params["id"]
        self.tasks[task_id] = {
            "id": task_id,
            "sessionId": params.get("sessionId"),
            "status": {"state": "completed", "timestamp": STAMP},
            "history": [params["message"]],
        }
        events = [
            {
                "id": task_id,
                "status": {
                    "state": "working",
                    "message": text("agent", "Streaming"),
                    "timestamp": STAMP,
                },
                "final": False,
            },
            {
                "id": task_id,
                "artifact": {
                    "parts": [{"type": "text", "text": "one "}],
                    "index": 0,
                    "append": False,
                },
            },
            {
                "id": task_id,
                "artifact": {
                    "parts": [{"type": "text", "text": "two"}],
                    "index": 0,
                    "append": True,
                    "lastChunk": True,
                },
            },
            {"id": task_id, "status": {"state": "completed", "timestamp": STAMP}, "final": True},
        ]
        for event in events:
            yield b"data: " + json.dumps({"jsonrpc": "2.0", "id": rid, "result": event}).encode()
            yield b"\n\n"


class _Failure(Exception):
    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.message = message


def _error(rid: Any, code: int, message: str) -> Response:
    return JSONResponse({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})
