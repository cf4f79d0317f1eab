from collections.abc import AsyncIterator

from parley.server import AgentContext, InputRequired, agent, create_app
from parley.types import AgentCapabilities, AgentCard, AgentSkill


@agent
async def greeter(ctx: AgentContext) -> AsyncIterator[str | InputRequired]:
    name = ctx.text.strip()
    if not name:
        yield InputRequired("What is your name?")  # the task waits for the next message
        return
    await ctx.progress("Thinking of a greeting...")  # a `working` status with a message
    yield f"Hello, {name}!"  # a chunk of the response artifact; the task then completes


card = AgentCard(
    name="Greeter",
    description="Greets you by name.",
    url="",  # empty: parley fills it from the address it is served at
    version="1.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="greet", name="Greet", description="Says hello.", tags=["demo"])],
)
# from the repository's root: uvicorn examples.greeter:app (or parley serve examples.greeter:app)
app = create_app(greeter, card)
