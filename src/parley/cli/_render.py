"""How the CLI shows A2A objects to a person: cards, tasks, events and artifacts.

Text is printed inline, data parts as a table (flat objects) or pretty JSON, and file
parts with bytes are saved under their own name (never outside the chosen folder).
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from parley.protocol import is_terminal
from parley.types import (
    AgentCard,
    Artifact,
    DataPart,
    Event,
    FilePart,
    FileWithBytes,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)

STATE_STYLE = {
    TaskState.completed: "green",
    TaskState.failed: "red",
    TaskState.rejected: "red",
    TaskState.canceled: "yellow",
    TaskState.input_required: "cyan",
    TaskState.auth_required: "cyan",
}


def show_card(console: Console, card: AgentCard, warnings: list[str]) -> None:
    grid = Table.grid(padding=(0, 2))
    grid.add_row("[bold]description[/]", Text(card.description))
    for n, (version, binding, url) in enumerate(interfaces(card)):
        grid.add_row("[bold]interfaces[/]" if n == 0 else "", f"A2A {version} {binding:<9} {url}")
    grid.add_row("[bold]version[/]", card.version)
    caps = card.capabilities
    extended = bool(card.supports_authenticated_extended_card or caps.extended_agent_card)
    grid.add_row(
        "[bold]capabilities[/]",
        f"streaming={bool(caps.streaming)} pushNotifications={bool(caps.push_notifications)}"
        f" extendedCard={extended}",
    )
    if card.security_schemes:
        grid.add_row("[bold]security[/]", ", ".join(card.security_schemes))
    grid.add_row("[bold]input[/]", ", ".join(card.default_input_modes))
    grid.add_row("[bold]output[/]", ", ".join(card.default_output_modes))
    console.print(Panel(grid, title=f"[bold]{escape(card.name)}[/]"))
    if card.skills:
        skills = Table("skill", "description", "examples", show_lines=False)
        for skill in card.skills:
            skills.add_row(skill.name, skill.description, "\n".join(skill.examples or ()))
        console.print(skills)
    for warning in warnings:
        console.print(f"[yellow]warning:[/] {warning}")


def interfaces(card: AgentCard) -> list[tuple[str, str, str]]:
    """Every (A2A version, binding, URL) the card offers, newest version first: its
    v1.0 ``supportedInterfaces`` and its v0.3 ``url`` and ``additionalInterfaces``."""
    v03 = ".".join(card.protocol_version.split(".")[:2])
    found = [
        (i.protocol_version, i.protocol_binding, i.url) for i in card.supported_interfaces or ()
    ]
    found.append((v03, card.preferred_transport, card.url))
    found += [(v03, i.transport, i.url) for i in card.additional_interfaces or ()]
    unique: dict[tuple[str, str, str], tuple[str, str, str]] = {}
    for version, binding, url in found:  # the same URL with or without its final "/"
        unique.setdefault((version, binding, url.rstrip("/")), (version, binding, url))
    return sorted(unique.values(), key=_newest_first)


def _newest_first(interface: tuple[str, str, str]) -> tuple[int, ...]:
    return tuple(-int(n) for n in interface[0].split(".") if n.isdigit())


def state_line(state: TaskState) -> str:
    return f"[{STATE_STYLE.get(state, 'blue')}]{state.value}[/]"


def task_line(task_id: str, state: TaskState) -> str:
    return f"task [bold]{task_id}[/] {state_line(state)}"


def show_result(console: Console, result: Task | Message, save_dir: Path) -> None:
    if isinstance(result, Message):
        show_parts(console, result.parts, save_dir)
        return
    show_task(console, result, save_dir)


def show_task(console: Console, task: Task, save_dir: Path) -> None:
    # ids on lines of their own, so a terminal never wraps one in the middle
    console.print(task_line(task.id, task.status.state))
    console.print(f"[dim]context {task.context_id}[/]")
    if task.status.message is not None:
        show_parts(console, task.status.message.parts, save_dir)
    for artifact in task.artifacts or ():
        show_artifact(console, artifact, save_dir)


def show_history(console: Console, messages: list[Message]) -> None:
    """Each message on one line: its role, then its text parts."""
    for message in messages:
        console.print(f"[dim]{message.role.value}:[/] ", end="")
        console.print(" ".join(p.text for p in message.parts if isinstance(p, TextPart)))


def show_artifact(console: Console, artifact: Artifact, save_dir: Path) -> None:
    console.print(f"[dim]── artifact {artifact.name or artifact.artifact_id}[/]")
    show_parts(console, artifact.parts, save_dir)


def show_parts(console: Console, parts: list[Part], save_dir: Path, *, end: str = "\n") -> None:
    """Parts in order; text parts next to each other are one text (an artifact's
    appended chunks), with no line added between them."""
    texts: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
            continue
        _show_text(console, texts, end)
        if isinstance(part, DataPart):
            show_data(console, part.data)
        elif isinstance(part, FilePart):
            console.print(save_file(part, save_dir))
    _show_text(console, texts, end)


def _show_text(console: Console, texts: list[str], end: str) -> None:
    if texts:
        text = "".join(texts)
        console.print(text.rstrip("\n") if end else text, end=end, markup=False, highlight=False)
        texts.clear()


def show_data(console: Console, data: dict[str, Any]) -> None:
    """A flat object as a table, rows in key order (an object's order does not survive
    every binding: protobuf's Struct is a map); anything else as indented JSON."""
    if data and all(not isinstance(v, dict | list) for v in data.values()):
        table = Table("field", "value")
        for key in sorted(data):
            table.add_row(str(key), str(data[key]))
        console.print(table)
    else:
        console.print(Syntax(json.dumps(data, indent=2), "json", theme="ansi_dark"))


def save_file(part: FilePart, save_dir: Path) -> str:
    """Save a file part's bytes under its name in ``save_dir``; say where it went."""
    file = part.file
    name = Path(file.name or "file").name or "file"
    if not isinstance(file, FileWithBytes):
        return f"file {name}: {file.uri}"
    try:
        content = base64.b64decode(file.bytes, validate=True)
    except (binascii.Error, ValueError):
        return f"file {name}: the agent sent bytes that are not base64"
    target = save_dir / name
    stem, suffix, n = target.stem, target.suffix, 1
    while target.exists():
        target = save_dir / f"{stem}-{n}{suffix}"
        n += 1
    target.write_bytes(content)
    return f"file {name} saved to {target} ({len(content)} bytes)"


def show_status(console: Console, state: TaskState, parts: list[Part], save_dir: Path) -> None:
    """A status and its message: the state, then the message's text on the same line,
    wrapped at words as one paragraph; its other parts after it."""
    text = "".join(p.text for p in parts if isinstance(p, TextPart)).strip()
    style = STATE_STYLE.get(state, "blue")
    console.print(Text.assemble((state.value, style), ": ", text))
    show_parts(console, [p for p in parts if not isinstance(p, TextPart)], save_dir)


def show_event(console: Console, event: Event, save_dir: Path, *, line_open: bool) -> bool:
    """One streamed event, as a person wants to see it arrive. ``line_open``: the last
    output left a line unfinished (text chunks print inline); returns whether it still
    does after this event."""
    if isinstance(event, TaskArtifactUpdateEvent):
        parts = event.artifact.parts
        if all(isinstance(p, TextPart) for p in parts):
            show_parts(console, parts, save_dir, end="")
            text = "".join(p.text for p in parts if isinstance(p, TextPart))
            line_open = (line_open or bool(text)) and not text.endswith("\n")
            if event.last_chunk and line_open:
                console.print()
                line_open = False
            return line_open
        _end_line(console, line_open)
        show_artifact(console, event.artifact, save_dir)
    elif isinstance(event, TaskStatusUpdateEvent):
        if event.status.message is None:
            return line_open
        _end_line(console, line_open)
        console.print()
        show_status(console, event.status.state, event.status.message.parts, save_dir)
    elif isinstance(event, Message):
        _end_line(console, line_open)
        show_parts(console, event.parts, save_dir)
    elif isinstance(event, Task) and is_terminal(event.status.state):
        _end_line(console, line_open)
        show_task(console, event, save_dir)
    else:
        return line_open
    return False


def _end_line(console: Console, line_open: bool) -> None:
    if line_open:
        console.print()
