"""Following a task as it runs, for a person at a terminal: its events as they come
(``--stream``, ``resubscribe``, ``chat``), or its progress while a plain ``send`` waits
for the answer; and what to say when Ctrl-C stops following it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable, Iterator
from pathlib import Path

from rich.status import Status
from rich.text import Text

from parley.cli._common import err, out, print_json
from parley.cli._render import STATE_STYLE, show_event, show_result, task_line
from parley.client import StreamInterruptedError, TaskTracker
from parley.protocol import is_interrupted, is_terminal
from parley.types import (
    Event,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)


async def follow(
    events: AsyncGenerator[Event, None],
    json_output: bool,
    save_dir: Path,
    tracker: TaskTracker | None = None,
    *,
    final_line: bool = True,
    on_stop: OnStop | None = None,
) -> TaskState | None:
    """Print a stream's events as they come, with a spinner showing the task's state,
    then (with ``final_line``) the task's final line, unless the stream's last event was
    the whole task. Stopped once the task is known (Ctrl-C, or a stream that could not be
    resumed), ``on_stop`` is told which task, and whether the stream gave up."""
    tracker = tracker or TaskTracker()
    try:
        return await _follow(events, json_output, save_dir, tracker, final_line)
    except (asyncio.CancelledError, StreamInterruptedError) as stopped:
        if on_stop is not None and tracker.task is not None:
            on_stop(tracker.task, isinstance(stopped, StreamInterruptedError))
        raise


OnStop = Callable[[Task, bool], None]
"""Told the task a person stopped following, and whether the stream gave up (else
Ctrl-C stopped it)."""


def goes_on(url: str) -> OnStop:
    """What to say when a task is no longer followed: it goes on (or may, when the agent
    could not be reached), and how to follow it again or cancel it."""

    def say(task: Task, gave_up: bool) -> None:
        if gave_up:
            err.print(
                f"gave up following task [bold]{task.id}[/]; it may go on at the agent. "
                "Once the agent is back, to follow it again, or to cancel it:"
            )
        else:
            err.print(
                f"stopped following task [bold]{task.id}[/]; it goes on at the agent. "
                "To follow it again, or to cancel it:"
            )
        # each command on a line of its own, never wrapped by rich: it can be copied whole
        err.print(f"  parley resubscribe {url} {task.id}", soft_wrap=True)
        err.print(f"  parley cancel {url} {task.id}", soft_wrap=True)

    return say


class Reconnecting(logging.Handler):
    """Shows on a spinner that the client is resuming a broken stream (the client says
    so on its ``parley.client`` logger), and how often it has tried."""

    def __init__(self, status: Status) -> None:
        super().__init__(logging.INFO)
        self.status = status

    def emit(self, record: logging.LogRecord) -> None:
        attempt = getattr(record, "attempt", None)
        window = getattr(record, "window", None)
        if attempt is None or window is None:
            return
        self.status.update(
            f"the stream broke: reconnecting to the agent (attempt {attempt}; "
            f"trying for {window:g} s)..."
        )


@contextlib.contextmanager
def reconnecting(status: Status) -> Iterator[None]:
    """While inside, the client's attempts to resume a stream show on ``status``."""
    logger = logging.getLogger("parley.client")
    handler = Reconnecting(status)
    level = logger.level
    logger.addHandler(handler)
    if not logger.isEnabledFor(logging.INFO):
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


async def _follow(
    events: AsyncGenerator[Event, None],
    json_output: bool,
    save_dir: Path,
    tracker: TaskTracker,
    final_line: bool,
) -> TaskState | None:
    last: Event | None = None
    async with (
        contextlib.aclosing(events) as events,
        contextlib.aclosing(tracker.follow(events)) as followed,
    ):
        if json_output:
            async for event in followed:
                print_json(event)
            return tracker.state
        line_open = False
        with (
            Status("waiting for the agent...", console=err, spinner="dots") as status,
            reconnecting(status),
        ):
            async for last in followed:
                if tracker.state is not None:
                    status.update(f"task {tracker.state.value}...")
                # The spinner redraws its own line: never while a line of the answer is
                # open on the terminal, or it erases it (stdout and stderr share a screen).
                status.stop()
                line_open = show_event(out, last, save_dir, line_open=line_open)
                if not line_open:
                    status.start()
        if line_open:
            out.print()
    shown_whole = isinstance(last, Task)
    if final_line and tracker.task is not None and tracker.state is not None and not shown_whole:
        out.print()
        out.print(task_line(tracker.task.id, tracker.state))
    return tracker.state


async def watch(
    events: AsyncGenerator[Event, None],
    save_dir: Path,
    on_stop: OnStop,
    continued: Task | None = None,
) -> TaskState | None:
    """Wait for a task's answer as ``send`` does, showing its progress meanwhile: each
    status message on stderr as it comes, the state on a spinner; then the answer, shown
    as a blocking send's is. ``continued``: the task the message continues (its stream
    does not start with it)."""
    tracker = TaskTracker(continued)
    reply: Message | None = None
    try:
        async with contextlib.aclosing(tracker.follow(events)) as followed:
            with (
                Status("waiting for the agent...", console=err, spinner="dots") as status,
                reconnecting(status),
            ):
                updates = 0
                async for event in followed:
                    reply = event if isinstance(event, Message) else reply
                    updates += isinstance(event, TaskArtifactUpdateEvent)
                    _show_progress(event)
                    if tracker.state is not None:
                        count = f" ({updates} artifact updates)" if updates else ""
                        status.update(f"task {tracker.state.value}...{count}")
    except (asyncio.CancelledError, StreamInterruptedError) as stopped:
        if tracker.task is not None:
            on_stop(tracker.task, isinstance(stopped, StreamInterruptedError))
        raise
    answer = reply or tracker.task
    if answer is not None:
        show_result(out, answer, save_dir)
    return None if reply is not None else tracker.state


def _show_progress(event: Event) -> None:
    if not isinstance(event, TaskStatusUpdateEvent) or event.status.message is None:
        return
    if is_terminal(event.status.state) or is_interrupted(event.status.state):
        return  # the answer shows it
    text = "".join(p.text for p in event.status.message.parts if isinstance(p, TextPart))
    if text.strip():
        state = event.status.state
        err.print(Text.assemble((state.value, STATE_STYLE.get(state, "blue")), ": ", text.strip()))
