# mypy: ignore-errors
"""An agent written with the official a2a-sdk, in its documented style, for the interop suite.

Runs in the interop venv: an ``AgentExecutor`` served by ``DefaultRequestHandler`` with
``InMemoryTaskStore``, behind ``A2AStarletteApplication`` (JSON-RPC),
``A2ARESTFastAPIApplication`` (HTTP+JSON) or a grpc.aio server (gRPC; the card is then
served over HTTP and gRPC listens on a port of its own). It understands the
same first words as parley's interop agent (``tests/interop/agents.py``).

    python sdk_server.py --fd N [--binding JSONRPC|HTTP+JSON|GRPC] [--plain] [--push]

``--fd``: a TCP socket bound on 127.0.0.1 by the test (inherited) to serve HTTP on; with
``GRPC``, gRPC binds a port of its own choosing and the first line of stdout says which
(``grpc-port M``).

``--plain`` serves the agent with streaming off and no extended card; ``--push``
declares push notifications, served by the SDK's in-memory config store and its
``BasePushNotificationSender``.
"""

from __future__ import annotations

import argparse
import asyncio
import socket

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Part,
    TaskState,
    TextPart,
)
from a2a.utils import new_agent_text_message, new_task


class InteropAgentExecutor(AgentExecutor):
    """Plays the scenario named by the first word of the message."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        word, _, rest = text.partition(" ")
        task = context.current_task
        if word == "message" and task is None:
            await event_queue.enqueue_event(
                new_agent_text_message(rest, context.context_id, context.task_id)
            )
            return
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state == TaskState.input_required:
            await updater.add_artifact(
                [Part(root=TextPart(text=f"thanks for: {text}"))], name="response"
            )
            await updater.complete()
        elif word == "stream":
            await updater.start_work()
            await chunks(updater, [f"chunk {i};" for i in range(int(rest or "3"))], 0)
            await updater.complete()
        elif word == "slow":
            await updater.start_work(
                updater.new_agent_message([Part(root=TextPart(text="working slowly"))])
            )
            await chunks(updater, [f"part {i};" for i in range(3)], 1.0)
            await updater.complete()
        elif word == "wait":
            await updater.start_work(
                updater.new_agent_message([Part(root=TextPart(text="waiting to be canceled"))])
            )
            await asyncio.sleep(60)
        elif word == "ask":
            await updater.requires_input(
                updater.new_agent_message([Part(root=TextPart(text="What else?"))])
            )
        else:
            await updater.add_artifact([Part(root=TextPart(text=f"echo: {text}"))], name="response")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


async def chunks(updater: TaskUpdater, pieces: list[str], pause: float) -> None:
    artifact_id = None
    for index, piece in enumerate(pieces):
        if pause:
            await asyncio.sleep(pause)
        artifact_id = artifact_id or f"{updater.task_id}-response"
        await updater.add_artifact(
            [Part(root=TextPart(text=piece))],
            artifact_id=artifact_id,
            name="response" if index == 0 else None,
            append=None if index == 0 else True,
        )


def card(url: str, binding: str, *, plain: bool, push: bool = False) -> AgentCard:
    return AgentCard(
        name="a2a-sdk interop agent",
        description="The official SDK's side of the interop suite.",
        url=url,
        version="1.0.0",
        preferred_transport=binding,
        capabilities=AgentCapabilities(streaming=not plain, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text.", tags=["echo"])],
        supports_authenticated_extended_card=None if plain else True,
    )


def extended(public: AgentCard) -> AgentCard:
    secret = AgentSkill(id="secret", name="Secret", description="Extended only.", tags=["x"])
    return public.model_copy(
        update={"name": "a2a-sdk interop agent (extended)", "skills": [*public.skills, secret]}
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--binding", default="JSONRPC")
    parser.add_argument("--plain", action="store_true")
    parser.add_argument("--push", action="store_true")
    options = parser.parse_args()
    options.socket = socket.socket(fileno=options.fd)
    base = f"http://127.0.0.1:{options.socket.getsockname()[1]}"
    push = {}
    if options.push:
        import httpx
        from a2a.server.tasks import BasePushNotificationSender, InMemoryPushNotificationConfigStore

        store = InMemoryPushNotificationConfigStore()
        push = {
            "push_config_store": store,
            "push_sender": BasePushNotificationSender(httpx.AsyncClient(), store),
        }
    handler = DefaultRequestHandler(
        agent_executor=InteropAgentExecutor(), task_store=InMemoryTaskStore(), **push
    )
    if options.binding == "GRPC":
        asyncio.run(serve_grpc(options, handler))
        return
    if options.binding == "HTTP+JSON":
        from a2a.server.apps import A2ARESTFastAPIApplication

        public = card(base, "HTTP+JSON", plain=options.plain, push=options.push)
        app = A2ARESTFastAPIApplication(
            agent_card=public,
            http_handler=handler,
            extended_agent_card=None if options.plain else extended(public),
        ).build()
    else:
        from a2a.server.apps import A2AStarletteApplication

        public = card(f"{base}/", "JSONRPC", plain=options.plain, push=options.push)
        app = A2AStarletteApplication(
            agent_card=public,
            http_handler=handler,
            extended_agent_card=None if options.plain else extended(public),
        ).build()
    asyncio.run(serve_http(app, options.socket))


async def serve_http(app: object, sock: socket.socket) -> None:
    """Serve on the socket the test bound and handed over: its port was never free."""
    config = uvicorn.Config(app, log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


async def serve_grpc(options: argparse.Namespace, handler: DefaultRequestHandler) -> None:
    import grpc
    from a2a.grpc import a2a_pb2_grpc
    from a2a.server.apps import A2AStarletteApplication
    from a2a.server.request_handlers import GrpcHandler

    # A gRPC target, as the SDK's gRPC client dials card.url with its channel factory.
    # GrpcHandler takes no extended card: its GetAgentCard answers the public one.
    server = grpc.aio.server()
    grpc_port = server.add_insecure_port("127.0.0.1:0")  # bound here: the port was never free
    print(f"grpc-port {grpc_port}", flush=True)  # for the test, which reads it first
    public = card(f"127.0.0.1:{grpc_port}", "GRPC", plain=options.plain, push=options.push)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(public, handler), server)
    await server.start()
    # The card is discovered over HTTP, as the SDK's gRPC examples do.
    card_app = A2AStarletteApplication(agent_card=public, http_handler=handler).build()
    await serve_http(card_app, options.socket)
    await server.stop(1)


if __name__ == "__main__":
    main()
