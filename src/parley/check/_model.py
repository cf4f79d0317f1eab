"""What a check is: data (id, title, spec section, level, needs) and a small function.

A check's function takes a ``Probe`` (``parley.check._probe``) and returns when the
agent behaved as the section says; it raises ``Failed`` with the reason when it did not,
and ``Skipped`` when the agent gave it nothing to judge (no task to cancel, say). What
it sent and what came back is recorded on the probe and becomes the evidence.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parley.check._probe import Probe

V0_3 = "0.3"
V1_0 = "1.0"
EARLY = "2025-early"
VERSIONS = (V1_0, V0_3, EARLY)
"""The protocol versions checks can speak, newest first."""
JSONRPC = "JSONRPC"
REST = "HTTP+JSON"
GRPC = "GRPC"
BINDINGS = (JSONRPC, REST, GRPC)
EVIDENCE_LIMIT = 600
"""How much of one request or answer the evidence keeps (characters)."""


class Level(StrEnum):
    """How strongly the specification asks for what a check checks (RFC 2119)."""

    must = "MUST"
    should = "SHOULD"
    may = "MAY"


class Status(StrEnum):
    passed = "pass"
    failed = "fail"
    skipped = "skip"


class Scope(StrEnum):
    """How often a check runs."""

    agent = "agent"
    """Once for the agent (its card)."""
    version = "version"
    """Once per protocol version the agent offers."""
    surface = "surface"
    """Once per version and binding the agent offers."""


@dataclass(frozen=True, slots=True)
class Needs:
    """What must hold for a check to apply; a check that does not apply is not run."""

    versions: tuple[str, ...] = (V1_0, V0_3)
    bindings: tuple[str, ...] = BINDINGS
    capability: str | None = None
    """A member of the card's ``capabilities`` that must be true (``streaming``,
    ``pushNotifications``, ``extendedAgentCard``), or false with a leading ``!``."""
    security: bool = False
    """The card declares security requirements."""
    credentials: bool = False
    """The user gave credentials."""
    receiver: bool = False
    """A webhook the agent can reach is listening (``receiver=`` / ``--receiver``)."""


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    """``area.name``; the area groups the report and ``--only``/``--skip`` take it."""
    title: str
    level: Level
    sections: dict[str, str]
    """Spec version (``0.3.0``, ``1.0.1``) -> the section the check comes from."""
    run: Callable[[Probe], Awaitable[None]] = field(repr=False, compare=False)
    scope: Scope = Scope.surface
    needs: Needs = Needs()

    @property
    def area(self) -> str:
        return self.id.split(".", 1)[0]

    def section_for(self, version: str | None) -> str:
        """The section to quote for ``version`` (or every section, for an agent check)."""
        spec = {V1_0: "1.0.1", V0_3: "0.3.0", EARLY: "0.3.0"}.get(version or "")
        if spec in self.sections:
            return f"v{spec} §{self.sections[spec]}"
        return ", ".join(f"v{s} §{n}" for s, n in self.sections.items())


class Failed(Exception):  # a verdict on the agent, not an error of the program
    """The agent did not do what the check's section says; the message says what."""


class Skipped(Exception):
    """The check had nothing to judge; the message says why."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and its answer, each cut to ``EVIDENCE_LIMIT`` characters."""

    request: str
    answer: str


@dataclass(frozen=True, slots=True)
class Result:
    check: Check
    status: Status
    version: str | None = None
    binding: str | None = None
    reason: str = ""
    evidence: tuple[Exchange, ...] = ()
    seconds: float = 0.0

    @property
    def where(self) -> str:
        """``1.0 JSONRPC``, ``0.3``, or ``agent``."""
        return " ".join(p for p in (self.version, self.binding) if p) or "agent"


def cut(text: str, limit: int = EVIDENCE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


CHECKS: list[Check] = []
"""Every check, in the order they are defined (areas in the order of their modules)."""


def check(
    id: str,
    title: str,
    level: Level,
    *,
    v03: str | None = None,
    v10: str | None = None,
    scope: Scope = Scope.surface,
    needs: Needs = Needs(),
) -> Callable[[Callable[[Probe], Awaitable[None]]], Callable[[Probe], Awaitable[None]]]:
    """Register the decorated function as a check with this data."""
    sections = {spec: n for spec, n in (("0.3.0", v03), ("1.0.1", v10)) if n}

    def register(run: Callable[[Probe], Awaitable[None]]) -> Callable[[Probe], Awaitable[None]]:
        if any(c.id == id for c in CHECKS):
            raise ValueError(f"two checks are called {id}")
        CHECKS.append(Check(id, title, level, sections, run, scope, needs))
        return run

    return register
