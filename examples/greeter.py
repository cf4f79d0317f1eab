from collections.abc import AsyncIterator

from parley.server import AgentContext, InputRequired, agent, create_app
from parley.types import AgentCapabilities, AgentCard, AgentSkill


@agent
async def greeter(ctx: AgentContext) -> AsyncIterator[str | InputRequired]:
    if not (name := ctx.text.strip()):
        yield InputRequired("What is your name?")  # the task waits for the next message
        return
    await ctx.progress("Thinking of a greeting...")  # a `working` status with a message
    yield f"Hello, {name}!"  # a chunk of the response artifact; the task then completes


skill = AgentSkill(id="greet", name="Greet", description="Says hello.", tags=["demo"])
card = AgentCard(name="Greeter", description="Greets you by name.", version="1.0.0", url="",
                 capabilities=AgentCapabilities(streaming=True), skills=[skill],
                 default_input_modes=["text/plain"], default_output_modes=["text/plain"])
app = create_app(greeter, card)  # url "": parley fills in the address it is served at
