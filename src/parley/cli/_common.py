"""What the commands that talk to an agent share: options, connecting, exit codes, and
turning every error a person meets into one clear line."""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from enum import IntEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console

from parley.cli._credentials import (
    BasicOption,
    CAOption,
    CertOption,
    KeyOption,
    MoreCredentials,
    OAuthOption,
    ScopeOption,
    TokenURLOption,
)
from parley.client import (
    PROTOCOLS,
    AgentUnreachableError,
    APIKeyAuth,
    BearerAuth,
    CardError,
    Client,
    ClientError,
    ClientInterceptor,
    ClientTimeoutError,
    NotAnAgentError,
    connect,
)
from parley.protocol import (
    A2AError,
    InvalidAgentResponseError,
    PermissionDeniedError,
    UnauthenticatedError,
)

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(IntEnum):
    """The exit codes of ``parley`` (documented in docs/cli.md)."""

    ok = 0
    task_unsuccessful = 1
    """The task ended failed, rejected or canceled."""
    usage = 2
    """Bad arguments or options (a file that cannot be read, JSON that does not parse)."""
    unreachable = 3
    """The agent could not be reached, or did not answer in time."""
    not_an_agent = 4
    """No agent card, a bad card, or answers that are not A2A."""
    agent_error = 5
    """The agent answered with an A2A error (task not found, not cancelable, ...)."""
    refused = 6
    """The agent wants credentials, or refused the ones given."""
    interrupted = 130


URL = Annotated[str, typer.Argument(help="The agent: base URL, card URL, or card file.")]
TransportOption = Annotated[
    str | None,
    typer.Option("--transport", "-t", metavar="jsonrpc|grpc|rest", help="Use this transport."),
]
ProtocolOption = Annotated[
    str | None,
    typer.Option(
        "--protocol",
        metavar="1.0|0.3|2025-early",
        help="Speak this protocol: 1.0 or 0.3 (default: the newest the agent offers), or "
        "2025-early (the earlier JSON-RPC dialect).",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]
BearerOption = Annotated[
    str | None,
    typer.Option("--bearer", envvar="PARLEY_BEARER_TOKEN", help="Bearer token to send."),
]
APIKeyOption = Annotated[
    str | None,
    typer.Option(
        "--api-key", envvar="PARLEY_API_KEY", help="API key, sent as the card's scheme says."
    ),
]
HeaderOption = Annotated[
    list[str] | None,
    typer.Option("--header", "-H", metavar="'NAME: VALUE'", help="Extra header (repeatable)."),
]


TenantOption = Annotated[
    str | None,
    typer.Option(
        "--tenant",
        envvar="PARLEY_TENANT",
        help="A2A v1.0: the tenant to send in every request, instead of the one the "
        "agent's card gives its interface (v0.3 requests carry none).",
    ),
]


class Connection:
    """How to reach the agent, from the common options (``agent_command`` reads them)."""

    def __init__(
        self,
        url: str,
        transport: str | None,
        bearer: str | None = None,
        api_key: str | None = None,
        headers: list[str] | None = None,
        protocol: str | None = None,
        more: MoreCredentials | None = None,
        tenant: str | None = None,
    ) -> None:
        self.url = url
        self.tenant = tenant
        check_url(url)
        if transport is not None and transport.lower() not in ("jsonrpc", "grpc", "rest"):
            fail(
                ExitCode.usage,
                f"--transport must be one of jsonrpc, grpc, rest (not {transport!r})",
            )
        check_protocol(protocol)
        if tenant is not None and protocol not in (None, "1.0"):
            fail(ExitCode.usage, f"--tenant is A2A 1.0's: a {protocol} request carries none")
        self.transport = transport
        self.protocol = protocol
        self.interceptors: list[ClientInterceptor] = []
        if bearer:
            self.interceptors.append(BearerAuth(bearer))
        if api_key:
            self.interceptors.append(APIKeyAuth(api_key))
        if headers:
            self.interceptors.append(_Headers(parse_headers(headers)))
        try:
            self.interceptors += more.interceptors() if more else []
            self.tls = more.tls() if more else None
        except ValueError as error:
            fail(ExitCode.usage, str(error))

    @asynccontextmanager
    async def open(self) -> AsyncIterator[Client]:
        """A client for the agent; with ``--transport`` one the agent does not offer, the
        error says how to get it."""
        transports = [self.transport] if self.transport else None
        opening = connect(
            self.url,
            transports=transports,
            use_client_preference=transports is not None,
            interceptors=self.interceptors,
            protocol=self.protocol,
            tls=self.tls,
            tenant=self.tenant,
        )
        async with AsyncExitStack() as stack:
            try:
                client = await stack.enter_async_context(opening)
            except ClientError as error:
                if type(error) is not ClientError or not self.transport:
                    raise
                hint = _HOW_TO_SERVE[self.transport.lower()]  # no interface of that kind
                raise ClientError(f"{error.message}. {hint}") from None
            if self.tenant is not None and _protocol_of(client) != "1.0":
                fail(
                    ExitCode.usage,
                    f"--tenant is A2A 1.0's, and the agent at {self.url} is spoken to in "
                    f"{_protocol_of(client)}: it would not be sent",
                )
            yield client
            # after the answer, so that an error stays one line
            err.print(f"[dim]{speaking(client)}[/]", soft_wrap=True)


_SHARED: list[tuple[str, Any]] = [
    ("transport", TransportOption),
    ("protocol", ProtocolOption),
    ("tenant", TenantOption),
    ("bearer", BearerOption),
    ("api_key", APIKeyOption),
    ("header", HeaderOption),
    ("basic", BasicOption),
    ("oauth", OAuthOption),
    ("token_url", TokenURLOption),
    ("scope", ScopeOption),
    ("cert", CertOption),
    ("key", KeyOption),
    ("ca", CAOption),
]
"""The options every command that talks to an agent takes, in the order --help lists
them (after the command's own)."""


def agent_command(*, transport: bool = True) -> Callable[[F], F]:
    """Give a command that talks to an agent the shared options (``_SHARED``; without
    ``--transport`` when ``transport`` is false), read into one ``Connection``.

    The command is written as ``def send(url: URL, ..., connection: Connection)``: the
    ``connection`` parameter is replaced, in what typer sees, by those options.
    """

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "connection"]
        shared = [(n, a) for n, a in _SHARED if transport or n != "transport"]
        extra = [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=a)
            for n, a in shared
        ]

        def with_options(url: str, *args: Any, **options: Any) -> Any:
            given = {name: options.pop(name) for name, _ in shared}
            more = MoreCredentials(
                given["basic"],
                given["oauth"],
                given["token_url"],
                tuple(given["scope"] or ()),
                given["cert"],
                given["key"],
                given["ca"],
            )
            connection = Connection(
                url,
                given.get("transport"),
                given["bearer"],
                given["api_key"],
                given["header"],
                given["protocol"],
                more,
                given["tenant"],
            )
            return command(url, *args, connection=connection, **options)

        with_options.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*own, *extra]
        )
        with_options.__annotations__ = {p.name: p.annotation for p in [*own, *extra]}
        with_options.__name__ = command.__name__
        with_options.__qualname__ = command.__qualname__
        with_options.__doc__ = command.__doc__
        with_options.__module__ = command.__module__
        return with_options  # type: ignore[return-value]

    return decorate


def _protocol_of(client: Client) -> str:
    interface = getattr(client.transport, "interface", None)
    return "2025-early" if interface is None else str(interface.protocol)


def speaking(client: Client) -> str:
    """Which protocol version and binding the client speaks, at which URL."""
    interface = getattr(client.transport, "interface", None)
    if interface is None:  # one fixed transport (the 2025-early dialect)
        return "speaking the 2025-early JSON-RPC dialect"
    return f"speaking A2A {interface.protocol} over {interface.transport} at {interface.url}"


_HOW_TO_SERVE = {
    "grpc": "To serve gRPC too: parley serve --grpc-port 50051, or "
    "create_app(..., grpc=GRPCOptions(port=50051)); or leave out --transport",
    "rest": "HTTP+JSON is served unless the app is built with create_app(..., rest=False); "
    "or leave out --transport",
    "jsonrpc": "Leave out --transport to use what the agent offers",
}


def check_url(url: str) -> None:
    """Refuse a ``URL`` that is neither a URL nor a card file there is, suggesting the URL
    that was likely meant (``127.0.0.1:8000`` -> ``http://127.0.0.1:8000``)."""
    if "://" in url or Path(url).exists():
        return
    fail(
        ExitCode.usage,
        f"{url} is not a URL, and there is no card file of that name: did you mean http://{url} ?",
    )


def check_protocol(protocol: str | None) -> None:
    if protocol is not None and protocol not in PROTOCOLS:
        fail(ExitCode.usage, f"--protocol must be one of {', '.join(PROTOCOLS)} (not {protocol!r})")


class _Headers(ClientInterceptor):
    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers

    async def before(self, call: Any) -> None:
        call.context.headers.update(self.headers)


def parse_headers(values: list[str]) -> dict[str, str]:
    headers = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            fail(ExitCode.usage, f"--header {value!r} is not of the form 'Name: value'")
        headers[name.strip()] = content.strip()
    return headers


def parse_json(value: str, option: str) -> Any:
    try:
        return json.loads(value)
    except ValueError as error:
        fail(ExitCode.usage, f"{option} is not valid JSON: {error}")


def run(action: Callable[[], Awaitable[T]]) -> T:
    """Run ``action``; every error a person meets becomes one line and an exit code."""
    try:
        return asyncio.run(_guarded(action))
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]")
        raise typer.Exit(ExitCode.interrupted) from None
    except BrokenPipeError:  # the reader went away (``parley ... | head``): not an error
        raise typer.Exit(ExitCode.ok) from None


async def _guarded(action: Callable[[], Awaitable[T]]) -> T:
    try:
        return await action()
    except A2AError as error:
        code, line = describe(error)
        fail(code, line)


def describe(error: A2AError) -> tuple[ExitCode, str]:
    """The exit code and the one line for an error."""
    if isinstance(error, AgentUnreachableError | ClientTimeoutError):
        return ExitCode.unreachable, error.message
    if isinstance(error, CardError):
        # the summary is the message without the problems it lists (a URL in it has colons)
        summary = error.message.removesuffix("; ".join(error.problems[:5])).rstrip()
        lines = [summary, *(f"  - {p}" for p in error.problems)]
        return ExitCode.not_an_agent, "\n".join(lines) if error.problems else error.message
    if isinstance(error, NotAnAgentError | InvalidAgentResponseError):
        return ExitCode.not_an_agent, f"not an A2A agent? {error.message}"
    if isinstance(error, UnauthenticatedError | PermissionDeniedError):
        hint = " (use --bearer, --api-key, --basic, --oauth, --cert or --header)"
        return ExitCode.refused, f"credentials refused: {error.message}{hint}"
    if isinstance(error, ClientError):
        return ExitCode.unreachable, error.message
    return ExitCode.agent_error, f"the agent answered {type(error).__name__}: {error.message}"


def bound_listener(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (0: a free port; ``getsockname`` says which),
    bound here so that a port in use is one clear line (exit 2). It listens from here
    on: a client told the address is queued until the server accepts, never refused."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen(2048)
    except OSError as error:
        listener.close()
        fail(
            ExitCode.usage,
            f"cannot listen on {host}:{port}: {error.strerror or error} (another server?)",
        )
    return listener


def fail(code: ExitCode, line: str) -> NoReturn:
    err.print(f"[bold red]error:[/] {line}", soft_wrap=True)
    raise typer.Exit(code)


def print_json(value: Any) -> None:
    """One JSON document (a model, a list of models, or plain data) on one line."""
    if hasattr(value, "to_json"):
        sys.stdout.write(value.to_json().decode() + "\n")
    else:
        sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()
