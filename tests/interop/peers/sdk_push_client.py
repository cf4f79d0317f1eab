# mypy: ignore-errors
"""The official a2a-sdk client's push-config calls against a push-enabled server.

Runs in the interop venv (never in parley's). Over the binding ``--transport`` it sets
and gets configs with the SDK's Client (``set_task_callback``, ``get_task_callback``),
lists and deletes them the way each binding allows (the SDK's Client has no methods for
those: its JSON-RPC models, plain HTTP, its gRPC stub), provokes the two errors a config
meets (a refused URL, an unknown task), and sends a message with the SDK's
``ClientConfig.push_notification_configs`` so the server posts its updates to ``--hook``.
Prints one JSON object per line, as ``sdk_client.py`` does.

    python sdk_push_client.py --url http://127.0.0.1:PORT --hook URL --transport T
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    GetTaskPushNotificationConfigParams,
    PushNotificationConfig,
    TaskPushNotificationConfig,
)
from sdk_client import dump, emit, expect_error, grpc_target, single


def config(task_id: str, url: str, config_id: str | None = "c1") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        push_notification_config=PushNotificationConfig(id=config_id, url=url, token="sdk-token"),
    )


async def main() -> None:
    options = parse_args()
    async with httpx.AsyncClient(timeout=15) as http:
        base = {"httpx_client": http, "supported_transports": [options.transport]}
        if options.transport == "GRPC":
            base["grpc_channel_factory"] = grpc.aio.insecure_channel
        card = await A2ACardResolver(http, options.url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=False, **base)).create(card)
        asked = await single(client, "ask")
        emit("set", result=dump(await client.set_task_callback(config(asked.id, options.hook))))
        got = await client.get_task_callback(
            GetTaskPushNotificationConfigParams(id=asked.id, push_notification_config_id="c1")
        )
        emit("get", result=dump(got))
        refused = config(asked.id, "https://169.254.169.254/latest/meta-data")
        await expect_error("set_refused", client.set_task_callback(refused))
        await expect_error(
            "set_unknown_task", client.set_task_callback(config("nope", options.hook))
        )
        listing = {"JSONRPC": jsonrpc_list, "HTTP+JSON": rest_list, "GRPC": grpc_list}
        await listing[options.transport](http, options.url, asked.id)

        pushing = PushNotificationConfig(url=options.hook, token="sdk-token")
        sender = ClientFactory(
            ClientConfig(streaming=False, push_notification_configs=[pushing], **base)
        ).create(card)
        emit("send_with_push", result=dump(await single(sender, "hello push")))


async def jsonrpc_list(http: httpx.AsyncClient, url: str, task_id: str) -> None:
    from a2a.types import (
        DeleteTaskPushNotificationConfigResponse,
        ListTaskPushNotificationConfigResponse,
    )

    async def call(method: str, params: dict, model) -> dict:
        body = {"jsonrpc": "2.0", "id": method, "method": method, "params": params}
        return dump(model.model_validate((await http.post(url, json=body)).json()).root)

    listed = "tasks/pushNotificationConfig/list"
    listing = ListTaskPushNotificationConfigResponse
    emit("list", result=await call(listed, {"id": task_id}, listing))
    deleted = await call(
        "tasks/pushNotificationConfig/delete",
        {"id": task_id, "pushNotificationConfigId": "c1"},
        DeleteTaskPushNotificationConfigResponse,
    )
    emit("delete", result=deleted)
    emit(
        "list_after_delete",
        result=await call(listed, {"id": task_id}, ListTaskPushNotificationConfigResponse),
    )


async def rest_list(http: httpx.AsyncClient, url: str, task_id: str) -> None:
    path = f"{url}/v1/tasks/{task_id}/pushNotificationConfigs"
    listed = await http.get(path)
    emit("list", status=listed.status_code, result=listed.json())
    deleted = await http.delete(f"{path}/c1")
    emit("delete", status=deleted.status_code, result=deleted.text)
    after = await http.get(path)
    emit("list_after_delete", status=after.status_code, result=after.json())


async def grpc_list(http: httpx.AsyncClient, url: str, task_id: str) -> None:
    from a2a.grpc import a2a_pb2, a2a_pb2_grpc
    from google.protobuf.json_format import MessageToDict

    async with grpc.aio.insecure_channel(await grpc_target(http, url)) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        listing = a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task_id}")
        listed = stub.ListTaskPushNotificationConfig
        emit("list", result=MessageToDict(await listed(listing)))
        await stub.DeleteTaskPushNotificationConfig(
            a2a_pb2.DeleteTaskPushNotificationConfigRequest(
                name=f"tasks/{task_id}/pushNotificationConfigs/c1"
            )
        )
        emit("delete", result=None)
        emit(
            "list_after_delete",
            result=MessageToDict(await stub.ListTaskPushNotificationConfig(listing)),
        )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--hook", required=True)
    parser.add_argument("--transport", default="JSONRPC")
    return parser.parse_args()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as error:  # the test shows this; the traceback goes to stderr
        print(f"sdk_push_client peer failed: {error!r}", file=sys.stderr)
        raise
