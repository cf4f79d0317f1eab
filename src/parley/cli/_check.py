"""``parley check URL``: the conformance checks of ``parley.check`` against an agent."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from parley.check import CHECKS, Report, Result, Status, as_json, junit, listing, run, select, text
from parley.cli._common import Connection, ExitCode, agent_command, err, fail, out
from parley.cli._common import run as run_action
from parley.client import transport_name

_Names = Annotated[
    list[str] | None,
    typer.Option(help="Check ids or areas, comma-separated or repeated."),
]


@agent_command()
def check(
    url: Annotated[
        str,
        typer.Argument(help="The agent's base URL (not needed with --list).", show_default=False),
    ] = "",  # "" rather than None: the shared options read it (an empty one is refused below)
    list_checks: Annotated[bool, typer.Option("--list", help="List the checks and exit.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    junit_file: Annotated[
        Path | None, typer.Option("--junit", help="Also write the report as JUnit XML here.")
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail on a SHOULD too, not only on a MUST.")
    ] = False,
    only: _Names = None,
    skip: _Names = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List the passed and skipped checks too.")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds each check may take.")] = 10.0,
    overall_timeout: Annotated[float, typer.Option(help="Seconds the whole run may take.")] = 120.0,
    webhook: Annotated[
        str | None,
        typer.Option(help="URL for the push configs the checks set (never called)."),
    ] = None,
    receiver: Annotated[
        str | None,
        typer.Option(
            help="HOST:PORT to listen on for the agent's push notifications (port 0: a "
            "free one); the agent must reach it. Without it push delivery is not checked."
        ),
    ] = None,
    receiver_url: Annotated[
        str | None,
        typer.Option(help="The URL the agent reaches --receiver at, when not http://HOST:PORT."),
    ] = None,
    *,
    connection: Connection,
) -> None:
    """Check that an agent speaks A2A as the specification says, on every version and
    binding its card offers. Exit status 0 when no MUST failed (with --strict, no SHOULD
    either), 1 otherwise."""
    chosen = select(CHECKS, _split(only), _split(skip))
    if list_checks:
        out.print(listing(chosen), soft_wrap=True, markup=False)
        return
    if not url:
        fail(ExitCode.usage, "give the agent's URL (or --list)")
    options = _Options(
        _split(only), _split(skip), strict, timeout, overall_timeout, webhook, receiver,
        receiver_url,
    )  # fmt: skip
    report = run_action(lambda: _run(url, connection, options))
    if junit_file is not None:
        junit_file.write_bytes(junit(report))
    if json_output:
        sys.stdout.write(json.dumps(as_json(report), indent=2) + "\n")
    else:
        out.print(text(report, verbose=verbose), soft_wrap=True, markup=False, highlight=False)
    if not report.ok:
        raise typer.Exit(1)


@dataclass(frozen=True)
class _Options:
    only: list[str]
    skip: list[str]
    strict: bool
    timeout: float
    overall_timeout: float
    webhook: str | None
    receiver: str | None
    receiver_url: str | None


async def _run(url: str, connection: Connection, options: _Options) -> Report:
    progress = _Progress()
    with err.status("checking...") as status:
        progress.status = status
        return await run(
            url,
            interceptors=connection.interceptors,
            tls=connection.tls,
            versions=[connection.protocol] if connection.protocol else None,
            bindings=[transport_name(connection.transport)] if connection.transport else None,
            only=options.only,
            skip=options.skip,
            strict=options.strict,
            check_timeout=options.timeout,
            overall_timeout=options.overall_timeout,
            webhook=options.webhook,
            receiver=options.receiver,
            receiver_url=options.receiver_url,
            on_result=progress,
        )


class _Progress:
    def __init__(self) -> None:
        self.done = self.failed = 0
        self.status: object = None

    def __call__(self, result: Result) -> None:
        self.done += 1
        self.failed += result.status is Status.failed
        if result.status is Status.failed:
            err.print(f"[red]FAIL[/] {result.check.id} [{result.where}]", soft_wrap=True)
        if self.status is not None:
            self.status.update(  # type: ignore[attr-defined]
                f"checking... {self.done} done, {self.failed} failed"
            )


def _split(values: list[str] | None) -> list[str]:
    return [name.strip() for value in values or () for name in value.split(",") if name.strip()]
