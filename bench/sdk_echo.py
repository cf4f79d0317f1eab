"""a2a-sdk 0.3.26's echo agent for the benchmark, in the SDK's documented style.

Runs in the interop venv (``.interop/venv``): an ``AgentExecutor`` that completes a task
with the text as its artifact (or streams 10 chunks for ``stream``), served by
``DefaultRequestHandler`` + ``InMemoryTaskStore`` + ``A2AStarletteApplication``.
Serve with ``uvicorn sdk_echo:app`` from ``bench/``.
"""

from __future__ import annotations

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TextPart
from a2a.utils import new_task

CHUNKS = 10


class EchoAgentExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input()
        if text == "stream":
            await updater.start_work()
            artifact_id = f"{task.id}-response"
            for index in range(CHUNKS):
                await updater.add_artifact(
                    [Part(root=TextPart(text=f"chunk {index} of the streamed answer;"))],
                    artifact_id=artifact_id,
                    name="response" if index == 0 else None,
                    append=None if index == 0 else True,
                )
        else:
            await updater.add_artifact([Part(root=TextPart(text=text))], name="response")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


card = AgentCard(
    name="bench echo",
    description="Echoes text.",
    url="http://127.0.0.1/",
    version="1.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="echo", name="Echo", description="Echoes text.", tags=["echo"])],
)
store = InMemoryTaskStore()
handler = DefaultRequestHandler(agent_executor=EchoAgentExecutor(), task_store=store)
app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
