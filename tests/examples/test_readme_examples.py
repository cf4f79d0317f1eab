"""The agents shown in README.md work as shown (the README quotes examples/ verbatim)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from parley.server import AgentExecutor, RequestHandler
from parley.types import Message, MessageSendParams, Role, Task, TaskState, TextPart

ROOT = Path(__file__).resolve().parents[2]


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def params(text: str, task_id: str | None = None) -> MessageSendParams:
    return MessageSendParams(
        message=Message(
            message_id=text or "empty", role=Role.user, parts=[TextPart(text=text)], task_id=task_id
        )
    )


def test_readme_quotes_the_examples() -> None:
    readme = (ROOT / "README.md").read_text()
    greeter = (ROOT / "examples" / "greeter.py").read_text()
    assert greeter.strip() in readme
    executor = (ROOT / "examples" / "greeter_executor.py").read_text()
    agent_part = executor.partition("\n\n\n# The card of greeter.py")[0]
    agent_part = agent_part.replace(", create_app\n", "\n").replace(
        "from parley.types import AgentCapabilities, AgentCard, AgentSkill\n", ""
    )
    assert agent_part.strip() in readme


def test_the_agent_in_20_lines_is_20_lines() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "## An agent in 20 lines" in readme
    greeter = (ROOT / "examples" / "greeter.py").read_text()
    assert len(greeter.strip().splitlines()) <= 20


@pytest.mark.parametrize(
    ("example", "attribute"), [("greeter", "greeter"), ("greeter_executor", "Greeter")]
)
async def test_example_agent_asks_then_greets(example: str, attribute: str) -> None:
    module = load(example)
    executor: AgentExecutor = getattr(module, attribute)
    if isinstance(executor, type):
        executor = executor()
    handler = RequestHandler(executor, load("greeter").card)
    asked = await handler.send_message(params(" "))
    assert isinstance(asked, Task)
    assert asked.status.state is TaskState.input_required
    done = await handler.send_message(params("Ada", task_id=asked.id))
    assert isinstance(done, Task)
    assert done.status.state is TaskState.completed
    assert done.artifacts is not None
    assert done.artifacts[0].parts[0].text == "Hello, Ada!"  # type: ignore[union-attr]
    await handler.aclose()


def test_readme_quotes_the_client_example() -> None:
    code = (ROOT / "examples" / "client.py").read_text()
    assert code.strip() in (ROOT / "README.md").read_text()


def test_client_example_talks_to_the_demo_agent() -> None:
    import subprocess

    from parley.demo import JOKE, create_demo_app
    from tests.servers import running

    with running(create_demo_app()) as url:
        output = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "client.py"), url],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.splitlines()
    assert output[0] == JOKE
    assert output[1] == "task"
    assert output.count("artifact-update") == 5
    assert output[-1] == "status-update"
