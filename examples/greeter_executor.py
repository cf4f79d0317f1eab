from parley.server import EventSink, RequestContext, TaskUpdater, create_app
from parley.types import AgentCapabilities, AgentCard, AgentSkill


class Greeter:
    """The same agent, written against AgentExecutor with a TaskUpdater."""

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater.for_context(events, context)
        name = context.get_user_input().strip()
        if not name:
            await updater.requires_input("What is your name?")
            return
        await updater.start_work("Thinking of a greeting...")
        await updater.add_artifact(f"Hello, {name}!", name="response")
        await updater.complete()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        await TaskUpdater.for_context(events, context).cancel()


# The card of greeter.py, and the app (an instance, Greeter(), not the class):
# uvicorn examples.greeter_executor:app, or parley serve examples.greeter_executor:app
card = AgentCard(
    name="Greeter",
    description="Greets you by name.",
    url="",
    version="1.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="greet", name="Greet", description="Says hello.", tags=["demo"])],
)
app = create_app(Greeter(), card)
