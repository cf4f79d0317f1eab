# mypy: ignore-errors
"""a2a-sdk 1.3's client with its default settings (A2A 1.0 first) against a parley server:
each scenario prints one JSON line ``{"scenario": ..., ...}``. Run with the SDK's venv.

Usage: sdk1_client.py --url URL --transport JSONRPC|HTTP+JSON|GRPC
"""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid
from typing import Any

import grpc
from a2a.client import ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from google.protobuf.json_format import MessageToDict


def report(scenario: str, **result: Any) -> None:
    print(json.dumps({"scenario": scenario, **result}), flush=True)


def message(text: str, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


async def send(client: Any, text: str, **fields: Any) -> list[dict[str, Any]]:
    request = SendMessageRequest(message=message(text, **fields))
    return [MessageToDict(item) async for item in client.send_message(request)]


async def error_of(call: Any) -> str:
    try:
        await call
    except Exception as error:
        return type(error).__name__
    return "none"


async def scenarios(client: Any, streaming: Any) -> None:
    [answer] = await send(client, "hello")
    task = answer["task"]
    report("send", state=task["status"]["state"], task=task)
    events = await send(streaming, "stream 3")
    report("stream", kinds=[next(iter(event)) for event in events], events=events)
    got = await client.get_task(GetTaskRequest(id=task["id"], history_length=1))
    report("get", task=MessageToDict(got))
    [asked] = await send(client, "ask")
    task_id, context_id = asked["task"]["id"], asked["task"]["contextId"]
    [more] = await send(client, "more", task_id=task_id, context_id=context_id)
    report("multi_turn", first=asked["task"]["status"]["state"], task=more["task"])
    request = SendMessageRequest(
        message=message("wait"), configuration=SendMessageConfiguration(return_immediately=True)
    )
    waiting = [MessageToDict(item) async for item in client.send_message(request)]
    wait_id = waiting[0]["task"]["id"]
    canceled = await client.cancel_task(CancelTaskRequest(id=wait_id))
    again = await error_of(client.cancel_task(CancelTaskRequest(id=wait_id)))
    report("cancel", state=MessageToDict(canceled)["status"]["state"], again=again)
    unknown = await error_of(client.get_task(GetTaskRequest(id="no-such-task")))
    report("errors", unknown_task=unknown)
    page = await client.list_tasks(ListTasksRequest(page_size=2))
    following = await client.list_tasks(
        ListTasksRequest(page_size=2, page_token=page.next_page_token)
    )
    report("list", page=MessageToDict(page), following=MessageToDict(following))
    card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    report("extended_card", card=MessageToDict(card))
    config = TaskPushNotificationConfig(task_id=task["id"], id="c1", url="https://example.com/hook")
    pushed = await error_of(client.create_task_push_notification_config(config))
    unknown_config = await error_of(
        client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id="no-such-task", id="c1")
        )
    )
    report("push", create=pushed, get_unknown=unknown_config)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--transport", required=True)
    args = parser.parse_args()

    def config(streaming: bool) -> ClientConfig:
        return ClientConfig(
            streaming=streaming,
            supported_protocol_bindings=[args.transport],
            grpc_channel_factory=grpc.aio.insecure_channel,
        )

    client = await ClientFactory(config(False)).create_from_url(args.url)
    streaming = await ClientFactory(config(True)).create_from_url(args.url)
    report("card", transport=type(client._transport).__name__)
    try:
        await scenarios(client, streaming)
    finally:
        await client.close()
        await streaming.close()


asyncio.run(main())
