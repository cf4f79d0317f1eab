"""``parley card|send|get|cancel|resubscribe``: one call to an agent each."""

from __future__ import annotations

import base64
import json
import mimetypes
from pathlib import Path
from typing import Annotated

import httpx
import typer

from parley.cli._common import (
    URL,
    Connection,
    ExitCode,
    JsonOption,
    agent_command,
    err,
    fail,
    out,
    parse_json,
    print_json,
    run,
)
from parley.cli._follow import follow, goes_on, watch
from parley.cli._render import (
    show_card,
    show_history,
    show_result,
    show_task,
    task_line,
)
from parley.client import AgentKeys, CardVerifier, Client, card_warnings, fetch_card
from parley.client._card_verify import POLICIES
from parley.protocol import TERMINAL_STATES
from parley.types import (
    AgentCard,
    DataPart,
    FilePart,
    FileWithBytes,
    Part,
    PushNotificationConfig,
    Task,
    TaskState,
    TextPart,
)

_UNSUCCESSFUL = TERMINAL_STATES - {TaskState.completed}
SaveOption = Annotated[
    Path, typer.Option("--save-dir", help="Where files the agent sends are saved.")
]


@agent_command(transport=False)
def card(
    url: URL,
    json_output: JsonOption = False,
    extended: Annotated[
        bool,
        typer.Option("--extended", help="Show the authenticated extended card (give credentials)."),
    ] = False,
    verify: Annotated[
        bool, typer.Option("--verify", help="Check the card's signatures and say so.")
    ] = False,
    trusted_jwks: Annotated[
        str | None,
        typer.Option(
            "--trusted-jwks",
            help="JWKS (URL or file) of the keys to trust for --verify. Default: the "
            "agent's own /.well-known/jwks.json (integrity only, not who signed).",
        ),
    ] = None,
    signature_policy: Annotated[
        str, typer.Option("--signature-policy", help="off, if-present or require.")
    ] = "require",
    *,
    connection: Connection,
) -> None:
    """Fetch an agent card, check it, and show it (the extended card with --extended)."""
    verifier = card_verifier(url, trusted_jwks, signature_policy) if verify else None

    async def action() -> None:
        if extended:
            async with connection.open() as client:
                declares_extended(client.card)
                agent_card = await client.get_extended_card()
        else:
            tls = connection.tls
            async with httpx.AsyncClient(verify=tls.ssl_context() if tls else True) as http:
                agent_card = await fetch_card(
                    url, http, protocol=connection.protocol, verifier=verifier
                )
        if json_output:
            print_json(agent_card)
        else:
            show_card(out, agent_card, card_warnings(agent_card))
        if verifier is not None and verifier.last is not None:
            found = verifier.last
            signer = f" by key {found.key_id}" if found.key_id else ""
            err.print(f"signature: {found.status}{signer}")

    run(action)


def declares_extended(public: AgentCard | None) -> None:
    """Refuse ``--extended`` for an agent whose card declares no extended card (asking
    would meet its credential check, or an error that says less)."""
    if public is None:
        return
    declared = (
        public.supports_authenticated_extended_card or public.capabilities.extended_agent_card
    )
    if not declared:
        fail(
            ExitCode.agent_error,
            f"{public.name} has no extended card (its card does not declare one): "
            "parley card without --extended shows the card there is",
        )


def card_verifier(url: str, trusted_jwks: str | None, policy: str) -> CardVerifier:
    """The ``CardVerifier`` of ``parley card --verify``."""
    if policy not in POLICIES:
        fail(ExitCode.usage, f"--signature-policy must be one of {', '.join(POLICIES)}")
    if trusted_jwks is None:
        base = url.split("/.well-known/")[0]
        keys = AgentKeys.of_agent(base)
    elif trusted_jwks.startswith(("http://", "https://")):
        keys = AgentKeys(trusted_jwks)
    else:
        try:
            keys = AgentKeys(jwks=json.loads(Path(trusted_jwks).read_text()))
        except (OSError, ValueError) as error:
            fail(ExitCode.usage, f"--trusted-jwks {trusted_jwks}: {error}")
    return CardVerifier(keys, policy)


@agent_command()
def send(
    url: URL,
    text: Annotated[str, typer.Argument(help="The message text.")],
    file: Annotated[
        list[Path] | None, typer.Option("--file", "-f", help="Attach a file (repeatable).")
    ] = None,
    data: Annotated[str | None, typer.Option("--data", help="Attach a JSON object.")] = None,
    context: Annotated[
        str | None, typer.Option("--context", help="Context id to continue.")
    ] = None,
    task: Annotated[str | None, typer.Option("--task", help="Task id to continue.")] = None,
    stream: Annotated[bool, typer.Option("--stream", help="Show events as they arrive.")] = False,
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Return at once; the task goes on.")
    ] = False,
    save_dir: SaveOption = Path("."),
    push_url: Annotated[
        str | None,
        typer.Option("--push-url", help="Have the agent POST task updates here (see listen)."),
    ] = None,
    push_token: Annotated[
        str | None,
        typer.Option("--push-token", help="Token the agent sends with each push notification."),
    ] = None,
    json_output: JsonOption = False,
    *,
    connection: Connection,
) -> None:
    """Send a message; print the reply (exit 1 if the task fails)."""
    parts = message_parts(text, file or [], data)
    push = None if push_url is None else PushNotificationConfig(url=push_url, token=push_token)

    async def action() -> TaskState | None:
        async with connection.open() as client:
            if stream:
                events = client.stream_message(
                    parts, context_id=context, task_id=task, push_notification_config=push
                )
                return await follow(events, json_output, save_dir, on_stop=goes_on(url))
            if _watchable(client, no_wait, json_output):
                continued = None if task is None else await client.get_task(task)
                events = client.stream_message(
                    parts, context_id=context, task_id=task, push_notification_config=push
                )
                return await watch(events, save_dir, goes_on(url), continued)
            result = await client.send_message(
                parts,
                context_id=context,
                task_id=task,
                blocking=not no_wait,
                push_notification_config=push,
            )
            if json_output:
                print_json(result)
            else:
                show_result(out, result, save_dir)
            return result.status.state if isinstance(result, Task) else None

    finish(run(action))


@agent_command()
def get(
    url: URL,
    task_id: Annotated[str, typer.Argument(help="The task's id.")],
    history: Annotated[
        int | None, typer.Option("--history", help="How many history messages to show.")
    ] = None,
    save_dir: SaveOption = Path("."),
    json_output: JsonOption = False,
    *,
    connection: Connection,
) -> None:
    """Show a task (exit 1 if it failed, was rejected or canceled)."""

    async def action() -> TaskState:
        async with connection.open() as client:
            found = await client.get_task(task_id, history_length=history)
        if json_output:
            print_json(found)
        else:
            show_history(out, found.history or [])
            show_task(out, found, save_dir)
        return found.status.state

    finish(run(action))


@agent_command()
def cancel(
    url: URL,
    task_id: Annotated[str, typer.Argument(help="The task's id.")],
    json_output: JsonOption = False,
    *,
    connection: Connection,
) -> None:
    """Cancel a task."""

    async def action() -> None:
        async with connection.open() as client:
            canceled = await client.cancel_task(task_id)
        if json_output:
            print_json(canceled)
        else:
            out.print(task_line(canceled.id, canceled.status.state))

    run(action)


@agent_command()
def resubscribe(
    url: URL,
    task_id: Annotated[str, typer.Argument(help="The task's id.")],
    save_dir: SaveOption = Path("."),
    json_output: JsonOption = False,
    *,
    connection: Connection,
) -> None:
    """Follow a task's events until its run ends."""

    async def action() -> TaskState | None:
        async with connection.open() as client:
            events = client.resubscribe(task_id)
            return await follow(events, json_output, save_dir, on_stop=goes_on(url))

    finish(run(action))


def _watchable(client: Client, no_wait: bool, json_output: bool) -> bool:
    """Whether a plain ``send`` shows the task's progress while it waits: for a person
    at a terminal, from an agent that streams (it is asked for the stream, and shows
    the same answer at its end)."""
    card = client.card
    streams = card is not None and bool(card.capabilities.streaming)
    return streams and out.is_terminal and not (no_wait or json_output)


def finish(state: TaskState | None) -> None:
    if state in _UNSUCCESSFUL:
        raise typer.Exit(ExitCode.task_unsuccessful)


def message_parts(text: str, files: list[Path], data: str | None) -> list[Part]:
    """The parts of a message from the command line."""
    parts: list[Part] = [TextPart(text=text)]
    for path in files:
        try:
            content = path.read_bytes()
        except OSError as error:
            fail(ExitCode.usage, f"cannot read {path}: {error.strerror}")
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        encoded = base64.b64encode(content).decode()
        parts.append(FilePart(file=FileWithBytes(bytes=encoded, name=path.name, mime_type=mime)))
    if data is not None:
        value = parse_json(data, "--data")
        if not isinstance(value, dict):
            fail(ExitCode.usage, "--data must be a JSON object")
        parts.append(DataPart(data=value))
    return parts
