"""``parley chat``: an interactive, multi-turn conversation with an agent.

Every message goes out in the same context; while the task waits for input
(``input-required``), the next line answers it on the same task. Streams when the card
says the agent streams. ``/new`` starts a new context, ``/quit`` (or end of input) ends.
Ctrl-C during a turn stops following it (the task goes on; the chat offers to cancel
it) and the chat goes on; at the prompt it ends the chat.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from parley.cli._common import (
    URL,
    Connection,
    agent_command,
    describe,
    out,
    run,
)
from parley.cli._follow import follow
from parley.cli._render import show_result, show_status, state_line, task_line
from parley.client import Client, TaskTracker
from parley.protocol import A2AError, is_interrupted, is_terminal
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
                    await interruptible_turn(client, conversation, line, save_dir)

    run(action)


async def interruptible_turn(
    client: Client, conversation: Conversation, text: str, save_dir: Path
) -> None:
    """``turn``, which Ctrl-C stops without ending the chat."""
    running = asyncio.create_task(turn(client, conversation, text, save_dir))
    with _on_interrupt(running.cancel):
        try:
            await running
        except asyncio.CancelledError:
            if not running.cancelled() or _being_cancelled():
                raise  # the chat itself is ending
    if running.cancelled():
        await _stopped(client, conversation)


def _being_cancelled() -> bool:
    current = asyncio.current_task()
    return current is not None and current.cancelling() > 0


@contextmanager
def _on_interrupt(callback: Callable[[], object]) -> Iterator[None]:
    """Ctrl-C calls ``callback`` (in the event loop) instead of ending the program;
    the handler before is back on exit."""
    loop = asyncio.get_running_loop()
    before = signal.getsignal(signal.SIGINT)
    try:
        loop.add_signal_handler(signal.SIGINT, callback)
    except (NotImplementedError, RuntimeError):  # no loop signal handlers here (Windows)
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, before)


async def _stopped(client: Client, conversation: Conversation) -> None:
    """After Ctrl-C in a turn: the task goes on; cancel it if the person says so. The
    next line starts a new task in the same context."""
    task = conversation.tracker.task
    conversation.task_id = None
    conversation.tracker = TaskTracker()
    out.print()
    if task is None:
        out.print("[yellow]stopped waiting[/]: the agent may still be working on it")
        return
    conversation.context_id = task.context_id
    out.print(f"[yellow]stopped following task {task.id}[/]: it goes on at the agent")
    answer = read_line("cancel it? [y/N] ")
    if answer is None or answer.lower() not in ("y", "yes"):
        return
    try:
        canceled = await client.cancel_task(task.id)
    except A2AError as error:
        out.print(f"[red]not canceled:[/] {describe(error)[1]}")
        return
    out.print(task_line(canceled.id, canceled.status.state))


def read_line(prompt: str = PROMPT) -> str | None:
    """A line typed at ``prompt``; ``None`` at end of input. Ctrl-C here is a
    ``KeyboardInterrupt`` at once, not after the line is ended."""
    before = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return input(prompt).strip()
    except EOFError:
        out.print()
        return None
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, before)


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
