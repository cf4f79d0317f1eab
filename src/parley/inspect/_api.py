"""The JSON API the page calls: read a card, run its checks, connect, send (streamed back
as NDJSON, one event a line, as it arrives), resubscribe, cancel, and the live feed of
the wire log and push notifications (server-sent events).

Every agent call goes through the connection's parley ``Client``; an error the agent
gave is passed on as it gave it (its class, code, message and data).
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from parley.client import ClientCallContext, user_message
from parley.inspect._card import card_view, conformance
from parley.inspect._session import Choice, Connection, Connections
from parley.protocol import BY_NAME, A2AError
from parley.types import (
    FilePart,
    FileWithBytes,
    MessageSendConfiguration,
    MessageSendParams,
    Part,
    PushNotificationConfig,
    TaskIdParams,
    TextPart,
)

_NDJSON = "application/x-ndjson"


class BadRequest(Exception):
    """The page sent something the API cannot use (answered 400, or 404 with ``status``)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


Endpoint = Callable[[Request], Awaitable[Response]]


def endpoint(handler: Callable[[Request, dict[str, Any]], Awaitable[Response]]) -> Endpoint:
    """``handler`` given the JSON body; bad input answered 400 with what is wrong."""

    async def run(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _refused(BadRequest("the body is not JSON"))
        try:
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object")
            return await handler(request, body)
        except BadRequest as error:
            return _refused(error)

    return run


def _refused(error: BadRequest) -> JSONResponse:
    return JSONResponse({"error": {"type": "BadRequest", "message": error.message}}, error.status)


def error_json(error: Exception) -> dict[str, Any]:
    """An error as the page shows it: the agent's code, message and data when it gave them."""
    if isinstance(error, A2AError):
        found: dict[str, Any] = {
            "type": type(error).__name__,
            "code": error.code,
            "message": error.message,
        }
        if error.data is not None:
            found["data"] = error.data
        return found
    return {"type": type(error).__name__, "message": str(error)}


def _text(body: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = body.get(name)
    if value is None or value == "":
        if required:
            raise BadRequest(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{name} must be a string")
    return value


class API:
    """The endpoints, over the inspector's connections."""

    def __init__(self, connections: Connections) -> None:
        self.connections = connections

    def connection(self, body: dict[str, Any]) -> Connection:
        connection_id = _text(body, "id")
        try:
            return self.connections.get(str(connection_id))
        except KeyError:
            raise BadRequest(f"no connection {connection_id}: read the card again", 404) from None

    async def card(self, request: Request, body: dict[str, Any]) -> Response:
        url = str(_text(body, "url")).strip()
        if not url.startswith(("http://", "https://")):
            raise BadRequest("the agent's URL must start with http:// or https://")
        try:
            host = httpx.URL(url).host and urlsplit(url).hostname
        except ValueError as error:  # httpx.InvalidURL too
            raise BadRequest(f"{url} is not a URL: {error}") from None
        if not host:
            raise BadRequest(f"{url} is not a URL: it names no host")
        protocol = _text(body, "protocol", required=False)
        previous = _text(body, "previous", required=False)
        if previous is not None:  # the page connects anew: the old connection is done
            await self.connections.close(previous)
        connection = Connection(url, protocol)
        self.connections.add(connection)
        try:
            await connection.open()
        except A2AError as error:
            return JSONResponse({"id": connection.id, "error": error_json(error)})
        return JSONResponse({"id": connection.id, **card_view(connection)})

    async def checks(self, request: Request, body: dict[str, Any]) -> Response:
        return JSONResponse(await conformance(self.connection(body)))

    async def connect(self, request: Request, body: dict[str, Any]) -> Response:
        connection = self.connection(body)
        credentials = body.get("credentials") or {}
        if not isinstance(credentials, dict) or not all(
            isinstance(v, str) for v in credentials.values()
        ):
            raise BadRequest("credentials must map scheme names to strings")
        choice = Choice(
            protocol=_text(body, "protocol", required=False),
            transport=_text(body, "transport", required=False),
            credentials=credentials,
        )
        try:
            interface = await connection.use(choice)
        except A2AError as error:
            return JSONResponse({"error": error_json(error)})
        return JSONResponse({"interface": interface})

    async def send(self, request: Request, body: dict[str, Any]) -> Response:
        connection = self.connection(body)
        client = _client(connection)
        parts = _parts(body)
        message = user_message(
            parts,
            task_id=_text(body, "taskId", required=False),
            context_id=_text(body, "contextId", required=False),
        )
        push = None
        if body.get("push"):
            push = PushNotificationConfig(
                url=f"{str(request.base_url).rstrip('/')}/push/{connection.id}",
                token=connection.push_token,
            )
        streaming = bool(body.get("stream", True))
        params = MessageSendParams(
            message=message,
            configuration=MessageSendConfiguration(blocking=True, push_notification_config=push),
        )
        if not streaming:
            return _lines(_answer(lambda: client.call(BY_NAME["send_message"], params)))
        return _lines(_events(client.stream(BY_NAME["stream_message"], params)))

    async def resubscribe(self, request: Request, body: dict[str, Any]) -> Response:
        connection = self.connection(body)
        client = _client(connection)
        last = body.get("lastEventId")
        if last is not None and not isinstance(last, int):
            raise BadRequest("lastEventId must be an integer")
        params = TaskIdParams(id=str(_text(body, "taskId")))
        context = ClientCallContext(last_event_id=last)
        return _lines(_resumed(client, params, context))

    async def cancel(self, request: Request, body: dict[str, Any]) -> Response:
        client = _client(self.connection(body))
        return await _one(client.cancel_task(str(_text(body, "taskId"))))

    async def feed(self, request: Request) -> Response:
        try:
            connection = self.connections.get(request.path_params["id"])
        except KeyError:
            return _refused(BadRequest("no such connection", 404))
        return StreamingResponse(
            _server_sent(connection),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store"},
        )


async def _server_sent(connection: Connection) -> AsyncIterator[bytes]:
    async for entry in connection.wire.follow():
        yield b"data: " + json.dumps(entry).encode() + b"\n\n"


def _client(connection: Connection) -> Any:
    if connection.client is None:
        raise BadRequest("not connected: choose a version and binding first")
    return connection.client


def _parts(body: dict[str, Any]) -> list[Part]:
    parts: list[Part] = []
    text = body.get("text")
    if isinstance(text, str) and text:
        parts.append(TextPart(text=text))
    files = body.get("files") or []
    if not isinstance(files, list):
        raise BadRequest("files must be a list")
    for file in files:
        if not isinstance(file, dict) or not isinstance(file.get("bytes"), str):
            raise BadRequest("each file needs its bytes, base64-encoded")
        try:
            base64.b64decode(file["bytes"], validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest(f"the bytes of {file.get('name')!r} are not base64") from None
        name, mime_type = file.get("name"), file.get("mimeType")
        if not all(isinstance(value, str | None) for value in (name, mime_type)):
            raise BadRequest("a file's name and mimeType must be strings")
        parts.append(
            FilePart(file=FileWithBytes(bytes=file["bytes"], name=name, mime_type=mime_type))
        )
    if not parts:
        raise BadRequest("the message is empty: give text or a file")
    return parts


def _lines(items: AsyncIterator[dict[str, Any]]) -> StreamingResponse:
    async def encoded() -> AsyncIterator[bytes]:
        async for item in items:
            yield json.dumps(item).encode() + b"\n"

    return StreamingResponse(encoded(), media_type=_NDJSON, headers={"Cache-Control": "no-store"})


async def _events(stream: AsyncIterator[Any]) -> AsyncIterator[dict[str, Any]]:
    try:
        async for item in stream:
            yield {
                "type": "event",
                "time": time.time(),
                "seq": item.id,
                "event": json.loads(item.event.to_json()),
            }
    except A2AError as error:
        yield {"type": "error", "time": time.time(), "error": error_json(error)}
        return
    yield {"type": "end", "time": time.time()}


async def _resumed(
    client: Any, params: TaskIdParams, context: ClientCallContext
) -> AsyncIterator[dict[str, Any]]:
    """The task's events from where the page left off; when the agent refuses (the task
    ended meanwhile), its error, then the task as ``tasks/get`` gives it."""
    refused = False
    async for line in _events(client.stream(BY_NAME["resubscribe"], params, context)):
        refused = refused or line["type"] == "error"
        yield line
    if refused:
        async for line in _answer(lambda: client.get_task(params.id)):
            yield line


async def _answer(call: Callable[[], Awaitable[Any]]) -> AsyncIterator[dict[str, Any]]:
    try:
        result = await call()
    except A2AError as error:
        yield {"type": "error", "time": time.time(), "error": error_json(error)}
        return
    yield {"type": "event", "time": time.time(), "seq": None, "event": json.loads(result.to_json())}
    yield {"type": "end", "time": time.time()}


async def _one(call: Awaitable[Any]) -> Response:
    try:
        result = await call
    except A2AError as error:
        return JSONResponse({"error": error_json(error)})
    return JSONResponse({"task": json.loads(result.to_json()), "time": time.time()})


__all__ = ["API", "endpoint", "error_json"]
