"""The runner: read the card, work out what applies, run it with bounded time.

Every check that applies (the card declares what it needs: push, security...) runs once
per scope (the agent, each version, each version and binding), at most ``concurrency``
at a time, each within ``check_timeout`` seconds and all within ``overall_timeout``; a
check the overall limit cut short is reported as skipped with that reason.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

import parley.check._areas  # noqa: F401  (registers every check)
from parley.check._agent import Agent, Surface
from parley.check._model import CHECKS, Check, Failed, Level, Result, Scope, Skipped, Status
from parley.check._probe import Probe
from parley.check._receiver import Receiver
from parley.client import ClientInterceptor, ClientTLS, in_memory_http_client

IN_MEMORY_URL = "http://agent.local"


@dataclass
class Report:
    """The outcome of a run: every result, and what the agent offered."""

    url: str
    surfaces: list[Surface]
    results: list[Result] = field(default_factory=list)
    strict: bool = False
    card_problem: str = ""

    def failed(self, level: Level | None = None) -> list[Result]:
        return [
            r
            for r in self.results
            if r.status is Status.failed and (level is None or r.check.level is level)
        ]

    @property
    def ok(self) -> bool:
        """No MUST failed (nor a SHOULD, when strict)."""
        if self.failed(Level.must):
            return False
        return not (self.strict and self.failed(Level.should))

    def counts(self) -> dict[str, dict[str, int]]:
        """Level -> status -> how many results."""
        counts = {level.value: {s.value: 0 for s in Status} for level in Level}
        for result in self.results:
            counts[result.check.level.value][result.status.value] += 1
        return counts


def select(
    checks: Iterable[Check], only: Sequence[str] = (), skip: Sequence[str] = ()
) -> list[Check]:
    """The checks named (by id or area) in ``only`` (all when empty), less ``skip``'s."""

    def named(check: Check, names: Sequence[str]) -> bool:
        return check.id in names or check.area in names

    return [c for c in checks if (not only or named(c, only)) and not named(c, skip)]


async def run(
    url: str | None = None,
    *,
    app: Any = None,
    http_client: httpx.AsyncClient | None = None,
    interceptors: Sequence[ClientInterceptor] = (),
    tls: ClientTLS | None = None,
    versions: Sequence[str] | None = None,
    bindings: Sequence[str] | None = None,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    strict: bool = False,
    check_timeout: float = 10.0,
    overall_timeout: float = 120.0,
    concurrency: int = 4,
    webhook: str | None = None,
    receiver: str | None = None,
    receiver_url: str | None = None,
    on_result: Callable[[Result], None] | None = None,
) -> Report:
    """Check the agent at ``url`` (its base URL), or the ASGI ``app`` in process.

    ``interceptors`` carry credentials (``BearerAuth``, ``APIKeyAuth``...), as for
    ``parley.client.connect``; ``versions`` (``1.0``, ``0.3``, ``2025-early``) and
    ``bindings`` (``JSONRPC``, ``HTTP+JSON``, ``GRPC``) narrow what is checked;
    ``only``/``skip`` name checks or areas; ``webhook`` is the URL the push configs
    the checks set point to; ``receiver`` (``HOST:PORT``, port 0 for a free one) is where
    a webhook listens for the agent's notifications, at ``receiver_url`` when the agent
    reaches it by another address. ``on_result`` sees each result as it comes.
    An app is called with no socket; enter its lifespan first if it needs one (a parley
    ``A2AApp`` does not). Never raises for what the agent does: an agent that cannot be
    reached fails the card checks.
    """
    if (url is None) == (app is None):
        raise TypeError("check an agent at a url, or an ASGI app; one of the two")
    async with (
        _http(url, app, http_client, tls) as (http, base),
        _receiving(receiver, receiver_url) as listening,
    ):
        agent = Agent(base, http, list(interceptors), tls, check_timeout, receiver=listening)
        if webhook is not None:
            agent.webhook = webhook
        report = Report(base, [], strict=strict)
        try:
            await agent.read_card(
                list(versions) if versions else None, list(bindings) if bindings else None
            )
        except httpx.HTTPError as error:
            agent.card_problem = f"the card could not be fetched: {error!r}"
        report.surfaces = agent.surfaces
        report.card_problem = agent.card_problem
        jobs = list(_jobs(agent, select(CHECKS, only, skip)))
        await _run_jobs(agent, jobs, report, check_timeout, overall_timeout, concurrency, on_result)
    order = {id(c): i for i, c in enumerate(CHECKS)}
    report.results.sort(key=lambda r: (order[id(r.check)], r.version or "", r.binding or ""))
    return report


@asynccontextmanager
async def _http(
    url: str | None, app: Any, given: httpx.AsyncClient | None, tls: ClientTLS | None
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """The HTTP client to use (``given``, or one made here and closed after), and the
    base URL to call."""
    if given is not None:
        yield given, url or IN_MEMORY_URL
        return
    if app is not None:
        async with in_memory_http_client(app) as http:
            yield http, IN_MEMORY_URL
        return
    assert url is not None
    async with httpx.AsyncClient(verify=tls.ssl_context() if tls is not None else True) as http:
        yield http, url


@asynccontextmanager
async def _receiving(address: str | None, public_url: str | None) -> AsyncIterator[Receiver | None]:
    if address is None:
        yield None
        return
    host, _, port = address.rpartition(":")
    async with Receiver(host or "127.0.0.1", int(port or 0), public_url) as receiver:
        yield receiver


_Job = tuple[Check, Surface | None, str | None, str]
"""A check, the surface and version it runs on, and why it is skipped (or "")."""


def _jobs(agent: Agent, checks: list[Check]) -> Iterable[_Job]:
    for check in checks:
        if check.scope is Scope.agent:
            targets: list[tuple[Surface | None, str | None]] = [(None, None)]
        elif check.scope is Scope.version:
            targets = [(None, v) for v in agent.versions if v in check.needs.versions]
        else:
            targets = [
                (s, s.version)
                for s in agent.surfaces
                if s.version in check.needs.versions and s.binding in check.needs.bindings
            ]
        if not _applies(agent, check):
            continue
        for surface, version in targets:
            yield check, surface, version, _unmet(agent, check)


def _applies(agent: Agent, check: Check) -> bool:
    """Whether what the card declares makes ``check`` apply (a check of push configs
    does not apply to an agent without push)."""
    needs = check.needs
    if needs.capability is not None:
        name = needs.capability.lstrip("!")
        if agent.capability(name) == needs.capability.startswith("!"):
            return False
    return not needs.security or agent.declares_security()


def _unmet(agent: Agent, check: Check) -> str:
    """Why ``check`` cannot run although it applies, or ""."""
    if check.needs.credentials and not agent.has_credentials:
        return "needs credentials (--bearer, --api-key, --basic, --oauth, --cert or -H)"
    if check.needs.receiver and agent.receiver is None:
        return "needs a webhook the agent can reach (--receiver HOST:PORT)"
    return ""


async def _run_jobs(
    agent: Agent,
    jobs: list[_Job],
    report: Report,
    check_timeout: float,
    overall_timeout: float,
    concurrency: int,
    on_result: Callable[[Result], None] | None,
) -> None:
    limiter = anyio.Semaphore(concurrency)
    done: set[int] = set()

    def add(index: int, result: Result) -> None:
        done.add(index)
        report.results.append(result)
        if on_result is not None:
            on_result(result)

    async def one(index: int, job: _Job) -> None:
        async with limiter:
            add(index, await _run_one(agent, job, check_timeout))

    with anyio.move_on_after(overall_timeout):
        async with anyio.create_task_group() as group:
            for index, job in enumerate(jobs):
                group.start_soon(one, index, job)
    for index, (check, surface, version, _) in enumerate(jobs):
        if index not in done:
            reason = f"the run's time limit ({overall_timeout:g} s) ran out"
            add(index, _result(check, surface, version, Status.skipped, reason))


async def _run_one(agent: Agent, job: _Job, check_timeout: float) -> Result:
    check, surface, version, unmet = job
    if unmet:
        return _result(check, surface, version, Status.skipped, unmet)
    probe = Probe(agent, surface, version)
    start = time.monotonic()
    status, reason = Status.passed, ""
    try:
        with anyio.fail_after(check_timeout):
            await check.run(probe)
    except Failed as verdict:
        status, reason = Status.failed, str(verdict)
    except Skipped as why:
        status, reason = Status.skipped, str(why)
    except TimeoutError:
        status, reason = Status.failed, f"no verdict within {check_timeout:g} s"
    except Exception as error:  # the agent broke the check's expectations some other way
        status, reason = Status.failed, f"{type(error).__name__}: {error}"
    finally:
        with anyio.CancelScope(shield=True):
            await probe.aclose()
    seconds = round(time.monotonic() - start, 3)
    return Result(
        check,
        status,
        version,
        surface.binding if surface else None,
        reason,
        tuple(probe.exchanges),
        seconds,
    )


def _result(
    check: Check, surface: Surface | None, version: str | None, status: Status, reason: str
) -> Result:
    return Result(check, status, version, surface.binding if surface else None, reason)
