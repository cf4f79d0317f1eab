"""a2a-sdk 1.3's echo agent for the benchmark (protocol v1.0), in the SDK's documented style.

Runs in the a2a-sdk 1.3 venv (``.interop/venv-1``, see ``venvs.py``): an ``AgentExecutor``
that completes a task with the text as its artifact (or streams 10 chunks for
``stream``) through ``TaskUpdater``, served by ``DefaultRequestHandler`` +
``InMemoryTaskStore`` on a Starlette app with the SDK's card and JSON-RPC routes.
Clients send ``A2A-Version: 1.0`` and the v1.0 method names (``SendMessage``,
``SendStreamingMessage``). Serve with ``uvicorn sdk13_echo:app`` from ``bench/``.
"""

from __future__ import annotations

from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

CHUNKS = 10


class EchoAgentExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input()
        if text == "stream":
            await updater.start_work()
            artifact_id = f"{task.id}-response"
            for index in range(CHUNKS):
                await updater.add_artifact(
                    [new_text_part(f"chunk {index} of the streamed answer;")],
                    artifact_id=artifact_id,
                    name="response" if index == 0 else None,
                    append=None if index == 0 else True,
                )
        else:
            await updater.add_artifact([new_text_part(text)], name="response")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None
        assert context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


card = AgentCard(
    name="bench echo",
    description="Echoes text.",
    supported_interfaces=[
        AgentInterface(url="http://127.0.0.1/", protocol_binding="JSONRPC", protocol_version="1.0")
    ],
    version="1.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="echo", name="Echo", description="Echoes text.", tags=["echo"])],
)
handler = DefaultRequestHandler(
    agent_executor=EchoAgentExecutor(), task_store=InMemoryTaskStore(), agent_card=card
)
app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
