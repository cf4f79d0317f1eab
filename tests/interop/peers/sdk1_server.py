# mypy: ignore-errors
"""An agent written with a2a-sdk 1.3 in its documented style, serving A2A 1.0 only (its
default: no v0.3 compatibility) on JSON-RPC, HTTP+JSON and gRPC, for the interop suite.
It understands the same first words as parley's interop agent (``tests/interop/agents.py``).

    python sdk1_server.py --fd N [--push]

``--fd``: a TCP socket bound on 127.0.0.1 by the test (inherited) to serve HTTP on; gRPC
binds a port of its own choosing and the first line of stdout says which (``grpc-port M``).

With ``--push`` it declares push notifications and keeps configs in the SDK's in-memory
config store (its documented set-up; nothing is posted in the tests that use it).

The card (at ``/.well-known/agent-card.json``) is in v1.0's shape: no ``url``, only
``supportedInterfaces``.
"""

from __future__ import annotations

import argparse
import asyncio
import socket

import grpc
import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandlerV2, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    Role,
    TaskState,
)
from starlette.applications import Starlette


class InteropAgentExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        word, _, rest = text.partition(" ")
        task = context.current_task
        if word == "message" and task is None:
            reply = new_text_message(rest, context_id=context.context_id, role=Role.ROLE_AGENT)
            await event_queue.enqueue_event(reply)
            return
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.add_artifact([Part(text=f"thanks for: {text}")], name="response")
            await updater.complete()
        elif word == "stream":
            await updater.start_work()
            artifact_id = f"{task.id}-response"
            for index in range(int(rest or "3")):
                await updater.add_artifact(
                    [Part(text=f"chunk {index};")],
                    artifact_id=artifact_id,
                    name="response" if index == 0 else None,
                    append=None if index == 0 else True,
                )
            await updater.complete()
        elif word == "wait":
            await updater.start_work(updater.new_agent_message([Part(text="waiting")]))
            await asyncio.sleep(60)
        elif word == "ask":
            await updater.requires_input(updater.new_agent_message([Part(text="What else?")]))
        else:
            await updater.add_artifact([Part(text=f"echo: {text}")], name="response")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def card(base: str, grpc_port: int, push: bool = False) -> AgentCard:
    return AgentCard(
        name="a2a-sdk 1.3 interop agent",
        description="a2a-sdk 1.3's side of the interop suite (A2A 1.0 only).",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"{base}/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            AgentInterface(
                url=f"127.0.0.1:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"
            ),
        ],
        capabilities=AgentCapabilities(
            streaming=True, extended_agent_card=True, push_notifications=push
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text.", tags=["echo"])],
    )


async def serve(sock: socket.socket, push: bool) -> None:
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = grpc.aio.server()
    grpc_port = server.add_insecure_port("127.0.0.1:0")  # bound here: the port was never free
    print(f"grpc-port {grpc_port}", flush=True)  # for the test, which reads it first
    public = card(base, grpc_port, push)
    extended = AgentCard()
    extended.CopyFrom(public)
    extended.name = "a2a-sdk 1.3 interop agent (extended)"
    handler = DefaultRequestHandlerV2(
        InteropAgentExecutor(),
        InMemoryTaskStore(),
        public,
        push_config_store=InMemoryPushNotificationConfigStore() if push else None,
        extended_agent_card=extended,
    )
    routes = [
        *create_agent_card_routes(public),
        *create_jsonrpc_routes(handler, "/"),
        *create_rest_routes(handler),
    ]
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    await server.start()
    config = uvicorn.Config(Starlette(routes=routes), log_level="warning")
    try:
        # on the socket the test bound and handed over: its port was never free
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        await server.stop(0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--push", action="store_true")
    options = parser.parse_args()
    asyncio.run(serve(socket.socket(fileno=options.fd), options.push))


main()
