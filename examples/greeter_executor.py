from parley.server import EventSink, RequestContext, TaskUpdater


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
