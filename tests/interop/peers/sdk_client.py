# mypy: ignore-errors
"""The official a2a-sdk client, used the way its documentation shows, against a server.

Runs in the interop venv (never in parley's). Plays every scenario of the interop suite
against the agent at ``--url`` and prints one JSON object per line: what the SDK's
client parsed (dumped back to wire JSON), or which SDK error it raised. The test that
started it asserts on those lines.

    python sdk_client.py --url http://127.0.0.1:PORT --plain-url http://127.0.0.1:PORT2
        [--transport JSONRPC|HTTP+JSON|GRPC]

``--plain-url`` is the same agent with streaming off and no extended card.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from typing import Any

import grpc
import httpx
from a2a.client import (
    A2ACardResolver,
    ClientConfig,
    ClientFactory,
    create_text_message_object,
)
from a2a.client.errors import A2AClientError, A2AClientHTTPError, A2AClientJSONRPCError
from a2a.types import (
    GetTaskPushNotificationConfigParams,
    JSONRPCErrorResponse,
    Message,
    MessageSendConfiguration,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
)
from pydantic import BaseModel


def emit(scenario: str, **fields: Any) -> None:
    print(json.dumps({"scenario": scenario, **fields}), flush=True)


def dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, list | tuple):
        return [dump(item) for item in value]
    return value


def error_fields(error: Exception) -> dict[str, Any]:
    """What the SDK made of an error: its class and code, as its users would see them."""
    if isinstance(error, A2AClientJSONRPCError):
        return {
            "raised": type(error).__name__,
            "type": type(error.error).__name__,
            "code": error.error.code,
            "message": error.error.message,
        }
    if isinstance(error, grpc.aio.AioRpcError):  # the SDK's gRPC transport lets it through
        return {
            "raised": type(error).__name__,
            "grpc_status": error.code().name,
            "message": error.details(),
        }
    if isinstance(error, A2AClientHTTPError):
        return {
            "raised": type(error).__name__,
            "status": error.status_code,
            "message": error.message,
        }
    return {"raised": type(error).__name__, "message": str(error)}


def user_message(text: str, task: Task | None = None) -> Message:
    message = create_text_message_object(role=Role.user, content=text)
    if task is not None:
        message.task_id = task.id
        message.context_id = task.context_id
    return message


async def single(client, text: str, **kwargs: Any) -> Any:
    """The one result of a non-streaming send: a Task or a Message."""
    results = [event async for event in client.send_message(user_message(text), **kwargs)]
    assert len(results) == 1, results
    result = results[0]
    return result[0] if isinstance(result, tuple) else result


async def expect_error(scenario: str, call) -> None:
    try:
        value = await call
    except (A2AClientError, NotImplementedError, grpc.aio.AioRpcError) as error:
        emit(scenario, **error_fields(error))
    else:
        emit(scenario, raised=None, value=dump(value))


async def main() -> None:
    options = parse_args()
    async with httpx.AsyncClient(timeout=15) as http:
        base = {"httpx_client": http, "supported_transports": [options.transport]}
        if options.transport == "GRPC":  # the SDK's documented way: a channel per card URL
            base["grpc_channel_factory"] = grpc.aio.insecure_channel
        card = await A2ACardResolver(http, options.url).get_agent_card()
        emit("card", card=dump(card))
        plain = await ClientFactory.connect(
            options.url, client_config=ClientConfig(streaming=False, **base)
        )
        streaming = ClientFactory(ClientConfig(streaming=True, **base)).create(card)
        await sends(plain)
        await streams(streaming)
        await history(plain)
        await cancel_and_resubscribe(plain, streaming)
        await errors(plain, streaming)
        await push_configs(plain)
        extended = await plain.get_card()
        emit("extended_card", card=dump(extended))
        raw_errors = {
            "JSONRPC": raw_jsonrpc_errors,
            "HTTP+JSON": raw_rest_errors,
            "GRPC": raw_grpc_errors,
        }[options.transport]
        await raw_errors(http, options.url, options.plain_url)


async def sends(client) -> None:
    task = await single(client, "hello interop")
    emit("send_task", result=dump(task))
    reply = await single(client, "message hi there")
    emit("send_message_reply", result=dump(reply))


async def streams(client) -> None:
    updates = []
    last_task = None
    async for event in client.send_message(user_message("stream 3")):
        task, update = event
        last_task = task
        updates.append({"update": dump(update)} if update is not None else {"task": dump(task)})
    emit("stream", events=updates, task=dump(last_task))
    replies = [dump(event) async for event in client.send_message(user_message("message streamed"))]
    emit("stream_message_reply", events=replies)


async def history(client) -> None:
    asked = await single(client, "ask")
    emit("ask", result=dump(asked))
    results = [e async for e in client.send_message(user_message("more", asked))]
    done = results[0][0]
    emit("answer", result=dump(done))
    emit("get_full", result=dump(await client.get_task(TaskQueryParams(id=done.id))))
    for length in (1, 0):
        got = await client.get_task(TaskQueryParams(id=done.id, history_length=length))
        emit(f"get_history_{length}", result=dump(got))


async def cancel_and_resubscribe(plain, streaming) -> None:
    not_blocking = MessageSendConfiguration(blocking=False)
    waiting = await single(plain, "wait", configuration=not_blocking)
    emit("wait_started", result=dump(waiting))
    emit("cancel", result=dump(await plain.cancel_task(TaskIdParams(id=waiting.id))))
    emit("get_canceled", result=dump(await plain.get_task(TaskQueryParams(id=waiting.id))))

    slow = await single(plain, "slow", configuration=not_blocking)
    events = []
    async for task, update in streaming.resubscribe(TaskIdParams(id=slow.id)):
        events.append({"update": dump(update)} if update is not None else {"task": dump(task)})
    emit("resubscribe", task_id=slow.id, events=events)
    finished = [
        {"task": dump(task)} if update is None else {"update": dump(update)}
        async for task, update in streaming.resubscribe(TaskIdParams(id=slow.id))
    ]
    emit("resubscribe_finished", events=finished)


async def errors(plain, streaming) -> None:
    missing = f"no-such-task-{uuid.uuid4()}"
    await expect_error("error_task_not_found", plain.get_task(TaskQueryParams(id=missing)))
    await expect_error("error_cancel_not_found", plain.cancel_task(TaskIdParams(id=missing)))
    done = await single(plain, "done soon")
    await expect_error("error_not_cancelable", plain.cancel_task(TaskIdParams(id=done.id)))
    await expect_error(
        "error_history_length", plain.get_task(TaskQueryParams(id=done.id, history_length=-1))
    )

    async def send_to_finished_task():
        return [e async for e in plain.send_message(user_message("again", done))]

    await expect_error("error_terminal_task", send_to_finished_task())

    async def resubscribe_missing():
        return [e async for e in streaming.resubscribe(TaskIdParams(id=missing))]

    await expect_error("error_resubscribe_not_found", resubscribe_missing())

    async def stream_to_finished_task():
        return [e async for e in streaming.send_message(user_message("again", done))]

    await expect_error("error_stream_terminal_task", stream_to_finished_task())


async def push_configs(client) -> None:
    task = await single(client, "push please")
    config = TaskPushNotificationConfig(
        task_id=task.id,
        push_notification_config=PushNotificationConfig(
            url="https://example.invalid/hook", token="t"
        ),
    )
    await expect_error("push_set", client.set_task_callback(config))
    await expect_error(
        "push_get", client.get_task_callback(GetTaskPushNotificationConfigParams(id=task.id))
    )


async def raw_jsonrpc_errors(http: httpx.AsyncClient, url: str, plain_url: str) -> None:
    """Errors the SDK's Client API cannot provoke, parsed with the SDK's own response models.

    The SDK's Client has no list/delete push-config methods; its JSON-RPC request and
    response models are public, so these go through them.
    """
    from a2a.types import (
        DeleteTaskPushNotificationConfigResponse,
        GetAuthenticatedExtendedCardResponse,
        JSONRPCResponse,
        ListTaskPushNotificationConfigResponse,
        SendStreamingMessageResponse,
    )

    task = await single(
        ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(
            await A2ACardResolver(http, url).get_agent_card()
        ),
        "for push",
    )
    calls = {
        "push_list": (
            url,
            "tasks/pushNotificationConfig/list",
            {"id": task.id},
            ListTaskPushNotificationConfigResponse,
        ),
        "push_delete": (
            url,
            "tasks/pushNotificationConfig/delete",
            {"id": task.id, "pushNotificationConfigId": "x"},
            DeleteTaskPushNotificationConfigResponse,
        ),
        "error_method_not_found": (url, "tasks/teleport", {}, JSONRPCResponse),
        "error_invalid_params": (
            url,
            "message/send",
            {"message": {"role": "user"}},
            JSONRPCResponse,
        ),
        "error_extended_not_configured": (
            plain_url,
            "agent/getAuthenticatedExtendedCard",
            None,
            GetAuthenticatedExtendedCardResponse,
        ),
    }
    for scenario, (target, method, params, model) in calls.items():
        body = {"jsonrpc": "2.0", "id": scenario, "method": method}
        if params is not None:
            body["params"] = params
        emit_raw(scenario, (await http.post(target, json=body)), model)
    stream_body = {
        "jsonrpc": "2.0",
        "id": "stream",
        "method": "message/stream",
        "params": {"message": dump(user_message("stream 2"))},
    }
    emit_raw(
        "error_unsupported_operation",
        await http.post(plain_url, json=stream_body),
        SendStreamingMessageResponse,
        streaming=True,
    )
    json_type = {"content-type": "application/json"}
    not_json = await http.post(url, content=b"{not json", headers=json_type)
    emit_raw("error_parse", not_json, JSONRPCResponse)
    emit_raw(
        "error_invalid_request",
        await http.post(url, json={"jsonrpc": "1.0", "id": 7, "method": 3}),
        JSONRPCResponse,
    )


async def raw_rest_errors(http: httpx.AsyncClient, url: str, plain_url: str) -> None:
    """The same errors over HTTP+JSON, at the spec's URLs (3.5.6).

    The SDK's REST transport has no list/delete push-config methods and no error model
    (its users get ``A2AClientHTTPError`` with the status), so these are plain HTTP
    calls; the answer's status, content type and JSON body are reported.
    """
    task = await first_task(http, url)
    message = json.dumps({"message": {"messageId": "m1", "role": "ROLE_USER"}})
    calls = {
        "push_list": (url, "GET", f"/v1/tasks/{task}/pushNotificationConfigs", None),
        "push_delete": (url, "DELETE", f"/v1/tasks/{task}/pushNotificationConfigs/x", None),
        "error_method_not_found": (url, "POST", "/v1/tasks:teleport", "{}"),
        "error_invalid_params": (url, "POST", "/v1/message:send", message),
        "error_extended_not_configured": (plain_url, "GET", "/v1/card", None),
        "error_unsupported_operation": (
            plain_url,
            "POST",
            "/v1/message:stream",
            json.dumps(
                {"message": {"messageId": "m2", "role": "ROLE_USER", "content": [{"text": "x"}]}}
            ),
        ),
        "error_parse": (url, "POST", "/v1/message:send", "{not json"),
    }
    for scenario, (target, method, path, body) in calls.items():
        headers = {"content-type": "application/json"}
        response = await http.request(method, target + path, content=body, headers=headers)
        try:
            payload = response.json()
        except ValueError:
            payload = response.text
        emit(
            scenario,
            raised="HTTP",
            status=response.status_code,
            content_type=response.headers.get("content-type", ""),
            body=payload,
        )


async def raw_grpc_errors(http: httpx.AsyncClient, url: str, plain_url: str) -> None:
    """The same errors over gRPC, through the SDK's generated ``A2AServiceStub`` (its
    Client has no list/delete push-config methods)."""
    from a2a.grpc import a2a_pb2, a2a_pb2_grpc

    task = await first_task(http, url)
    target = await grpc_target(http, url)
    plain_target = await grpc_target(http, plain_url)
    async with (
        grpc.aio.insecure_channel(target) as channel,
        grpc.aio.insecure_channel(plain_target) as plain_channel,
    ):
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        plain = a2a_pb2_grpc.A2AServiceStub(plain_channel)
        no_parts = a2a_pb2.SendMessageRequest(
            request=a2a_pb2.Message(message_id="m1", role=a2a_pb2.ROLE_USER)
        )
        streamed = a2a_pb2.SendMessageRequest(
            request=a2a_pb2.Message(
                message_id="m2",
                role=a2a_pb2.ROLE_USER,
                content=[a2a_pb2.Part(text="stream 2")],
            )
        )
        teleport = channel.unary_unary("/a2a.v1.A2AService/Teleport")
        garbage = channel.unary_unary("/a2a.v1.A2AService/SendMessage")
        calls = {
            "push_list": stub.ListTaskPushNotificationConfig(
                a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task}")
            ),
            "push_delete": stub.DeleteTaskPushNotificationConfig(
                a2a_pb2.DeleteTaskPushNotificationConfigRequest(
                    name=f"tasks/{task}/pushNotificationConfigs/x"
                )
            ),
            "error_method_not_found": teleport(b""),
            "error_invalid_params": stub.SendMessage(no_parts),
            "error_extended_not_configured": plain.GetAgentCard(a2a_pb2.GetAgentCardRequest()),
            "error_unsupported_operation": read_all(plain.SendStreamingMessage(streamed)),
            "error_parse": garbage(b"\xff\xff\xff"),
        }
        for scenario, call in calls.items():
            await expect_error(scenario, call)


async def read_all(stream) -> list[Any]:
    return [message async for message in stream]


async def first_task(http: httpx.AsyncClient, url: str) -> str:
    """The id of a finished task on the agent at ``url`` (sent over JSON-RPC)."""
    client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(
        await A2ACardResolver(http, url).get_agent_card()
    )
    return (await single(client, "for push")).id


async def grpc_target(http: httpx.AsyncClient, url: str) -> str:
    card = await A2ACardResolver(http, url).get_agent_card()
    urls = {i.transport: i.url for i in card.additional_interfaces or []}
    return urls["GRPC"]


def emit_raw(scenario: str, response: httpx.Response, model, *, streaming: bool = False) -> None:
    """Parse a JSON-RPC answer with the SDK's response ``model``; a streaming method's
    answer must be an SSE stream (spec 3.3.1), read here from its one event."""
    if streaming:
        content_type = response.headers.get("content-type", "")
        assert content_type.startswith("text/event-stream"), content_type
        events = [b for b in response.text.split("\n\n") if b.strip()]
        assert len(events) == 1, response.text
        assert events[0].startswith("data: "), response.text
        payload = json.loads(events[0][len("data: ") :])
    else:
        payload = response.json()
    parsed = model.model_validate(payload).root
    if isinstance(parsed, JSONRPCErrorResponse):
        emit(
            scenario,
            raised="A2AClientJSONRPCError",
            type=type(parsed.error).__name__,
            code=parsed.error.code,
            message=parsed.error.message,
            id=parsed.id,
            status=response.status_code,
        )
    else:
        emit(scenario, raised=None, value=dump(parsed))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--plain-url", required=True)
    parser.add_argument("--transport", default="JSONRPC")
    return parser.parse_args()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as error:  # the test shows this; the traceback goes to stderr
        print(f"sdk_client peer failed: {error!r}", file=sys.stderr)
        raise
