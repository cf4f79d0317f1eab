# mypy: ignore-errors
"""a2a-sdk 1.3's client with its default settings (A2A 1.0) configuring push on a parley
server that declares push notifications: each scenario prints one JSON line
``{"scenario": ..., ...}``. Run with the SDK's venv.

Usage: sdk1_push_client.py --url URL --transport JSONRPC|HTTP+JSON|GRPC --hook URL
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
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
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


def message(text: str) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])


async def error_of(call: Any) -> str:
    try:
        await call
    except Exception as error:
        return type(error).__name__
    return "none"


async def scenarios(client: Any, hook: str) -> None:
    [asked] = [
        MessageToDict(i)
        async for i in client.send_message(SendMessageRequest(message=message("ask")))
    ]
    task_id = asked["task"]["id"]
    for config_id in ("c1", "c2"):
        config = TaskPushNotificationConfig(task_id=task_id, id=config_id, url=hook, token="tok")
        created = await client.create_task_push_notification_config(config)
        report(f"create_{config_id}", config=MessageToDict(created))
    got = await client.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=task_id, id="c1")
    )
    report("get", config=MessageToDict(got))
    listed = await client.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task_id)
    )
    report("list", configs=MessageToDict(listed))
    await client.delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="c1")
    )
    after = await client.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task_id)
    )
    gone = await error_of(
        client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task_id, id="c1")
        )
    )
    report("delete", configs=MessageToDict(after), get_deleted=gone)
    unknown = await error_of(
        client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id="no-such-task")
        )
    )
    report("unknown_task", list=unknown)
    request = SendMessageRequest(
        message=message("hello"),
        configuration=SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url=hook, token="sent")
        ),
    )
    [sent] = [MessageToDict(i) async for i in client.send_message(request)]
    report("send_with_config", task=sent["task"])


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--transport", required=True)
    parser.add_argument("--hook", required=True)
    args = parser.parse_args()
    config = ClientConfig(
        streaming=False,
        supported_protocol_bindings=[args.transport],
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    client = await ClientFactory(config).create_from_url(args.url)
    try:
        await scenarios(client, args.hook)
    finally:
        await client.close()


asyncio.run(main())
