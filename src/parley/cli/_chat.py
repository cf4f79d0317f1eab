"""``parley chat``: an interactive, multi-turn conversation with an agent.

Every message goes out in the same context; while the task waits for input
(``input-required``), the next line answers it on the same task. Streams when the card
says the agent streams. ``/new`` starts a new context, ``/quit`` (or end of input) ends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from parley.cli._common import (
    URL,
    Connection,
    agent_command,
    out,
    run,
)
from parley.cli._render import show_result, show_status, state_line, task_line
from parley.cli._talk import follow
from parley.client import Client, TaskTracker
from parley.protocol import is_interrupted, is_terminal
from parley.types import Task, TaskState

PROMPT = "you> "


class Conversation:
    """Where the chat stands: its context, and the task waiting for an answer."""

    def __init__(self) -> None:
        self.context_id: str | None = None
        self.task_id: str | None = None
        self.tracker = TaskTracker()

    def update(self, task: Task | None, state: TaskState | None) -> None:
        if task is None:
            return
        self.context_id = task.context_id
        self.task_id = task.id if state is not None and not is_terminal(state) else None
        if self.task_id is None:
            self.tracker = TaskTracker()


@agent_command()
def chat(
    url: URL,
    save_dir: Annotated[
        Path, typer.Option("--save-dir", help="Where files the agent sends are saved.")
    ] = Path("."),
    *,
    connection: Connection,
) -> None:
    """Talk with an agent, turn after turn, in one context."""

    async def action() -> None:
        async with connection.open() as client:
            card = client.card
            assert card is not None
            out.print(f"[bold]{card.name}[/]: {card.description}")
            out.print("[dim]/new starts a new conversation, /quit ends (or Ctrl-D)[/]")
            conversation = Conversation()
            while (line := read_line()) is not None:
                if line in ("/quit", "/exit"):
                    break
                if line == "/new":
                    conversation = Conversation()
                    out.print("[dim]new conversation[/]")
                elif line:
                    await turn(client, conversation, line, save_dir)

    run(action)


def read_line() -> str | None:
    try:
        return input(PROMPT).strip()
    except EOFError:
        out.print()
        return None


async def turn(client: Client, conversation: Conversation, text: str, save_dir: Path) -> None:
    """Send one line and show the answer; remember the context and any waiting task.
    A task that waits for an answer is announced once: its question, or a line saying
    it waits when it asks none."""
    card = client.card
    streaming = card is not None and bool(card.capabilities.streaming)
    context_id, task_id = conversation.context_id, conversation.task_id
    if streaming:
        tracker = conversation.tracker
        events = client.stream_message(text, context_id=context_id, task_id=task_id)
        state = await follow(events, False, save_dir, tracker, final_line=False)
        conversation.update(tracker.task, state)
        task = tracker.task
        if task is not None and state is not None and not is_interrupted(state):
            out.print()
            out.print(task_line(task.id, state))
    else:
        result = await client.send_message(text, context_id=context_id, task_id=task_id)
        task = result if isinstance(result, Task) else None
        state = None if task is None else task.status.state
        if task is not None and state is not None and is_interrupted(state):
            message = task.status.message
            show_status(out, state, [] if message is None else message.parts, save_dir)
        else:
            show_result(out, result, save_dir)
        if task is not None:
            conversation.update(task, state)
        else:
            conversation.context_id = result.context_id or conversation.context_id
    if state is not None and is_interrupted(state) and (task is None or not _asks(task)):
        out.print(f"[dim]the agent waits for your answer ({state_line(state)})[/]")


def _asks(task: Task) -> bool:
    """Whether the task's status carries a message (its question, shown already)."""
    return task.status.message is not None and bool(task.status.message.parts)
