"""The bound: a raw ASGI app that does the least any A2A server must do.

It reads the body, parses the JSON-RPC request, and answers with a response of the same
shape and size as a completed echo task (fresh ids, the text echoed, history of one);
for ``message/stream`` the 12 SSE events a stream of 10 chunks needs: the Task (created
``working``), the chunks and the final status.
No validation, no task store, no agent. Serve with ``uvicorn bench.raw_app:app``.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

CHUNKS = 10
JSON_HEADERS = [(b"content-type", b"application/json")]
SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _task(request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str]:
    message = request["params"]["message"]
    task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
    user = {**message, "taskId": task_id, "contextId": context_id}
    task = {
        "kind": "task",
        "id": task_id,
        "contextId": context_id,
        "status": {"state": "completed", "timestamp": _now()},
        "history": [user],
    }
    text = "".join(part.get("text", "") for part in message["parts"])
    return task, user, text


def _send(request: dict[str, Any]) -> bytes:
    task, _, text = _task(request)
    task["artifacts"] = [
        {
            "artifactId": str(uuid.uuid4()),
            "parts": [{"kind": "text", "text": text}],
            "name": "response",
        }
    ]
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": task}).encode()


def _stream(request: dict[str, Any]) -> list[bytes]:
    task, _, _ = _task(request)
    ids = {"taskId": task["id"], "contextId": task["contextId"]}
    task["status"] = {"state": "working", "timestamp": _now()}
    artifact_id = str(uuid.uuid4())
    results: list[dict[str, Any]] = [task]
    for index in range(CHUNKS):
        artifact: dict[str, Any] = {
            "artifactId": artifact_id,
            "parts": [{"kind": "text", "text": f"chunk {index} of the streamed answer;"}],
        }
        update: dict[str, Any] = {"kind": "artifact-update", **ids, "artifact": artifact}
        if index == 0:
            artifact["name"] = "response"
        else:
            update["append"] = True
        results.append(update)
    results.append(
        {"kind": "status-update", **ids, "status": {"state": "completed", "timestamp": _now()},
         "final": True}
    )  # fmt: skip
    return [
        b"id: %d\ndata: %s\n\n"
        % (number, json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": r}).encode())
        for number, r in enumerate(results, 1)
    ]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["method"] == "GET":  # the card, for readiness probes
        body = b'{"name":"raw bound"}'
        await send({"type": "http.response.start", "status": 200, "headers": JSON_HEADERS})
        await send({"type": "http.response.body", "body": body})
        return
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    request = json.loads(b"".join(chunks))
    if request["method"] == "message/stream":
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        for event in _stream(request):
            await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    body = _send(request)
    headers = [*JSON_HEADERS, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
