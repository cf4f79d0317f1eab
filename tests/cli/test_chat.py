"""``parley chat`` driven through its prompts on stdin, as a person would type."""

from __future__ import annotations

from pathlib import Path

from parley.demo import ASK_DETAILS
from tests.cli.conftest import parley


def test_chat_books_a_flight_then_starts_a_new_task(agent_url: str) -> None:
    """Spec 6.3 (multi-turn, input-required) and 7.2: the chat answers the agent's
    questions on the same task, shows the data artifact as a table, then a new message
    in the same context starts a new task."""
    lines = ["book a flight", "from Berlin to Helsinki on 2025-06-01", "yes", "tell me a joke"]
    result = parley("chat", agent_url, stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count(ASK_DETAILS) == 1  # each question once, the task's state with it
    assert out.count("input-required") == 2
    assert "the agent waits for your answer" not in out
    assert "│ to           │ Helsinki" in out
    assert "Why did the agent cross the network?" in out
    task_lines = [line for line in out.splitlines() if line.startswith("task ")]
    assert len(task_lines) == 2  # the booking, then the joke: a new task
    assert all(line.endswith(" completed") for line in task_lines)
    assert task_lines[0].split()[1] != task_lines[1].split()[1]


def test_chat_saves_files_and_quits(agent_url: str, tmp_path: Path) -> None:
    """Spec 6.5.2: file artifacts are saved under their names; /quit ends the chat."""
    result = parley(
        "chat", agent_url, "--save-dir", str(tmp_path), stdin="hello\n/quit\nnot sent\n"
    )
    assert result.returncode == 0, result.stderr
    assert "hello" in result.stdout
    assert "not sent" not in result.stdout


def test_chat_with_an_unreachable_agent(tmp_path: Path) -> None:
    """A person pointing chat at nothing gets one line and exit code 3."""
    result = parley("chat", "http://127.0.0.1:1", stdin="hi\n")
    assert result.returncode == 3
    assert "Traceback" not in result.stderr
