"""What an agent and the request handler know about a call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from parley.types import (
    Message,
    MessageSendConfiguration,
    Task,
    TextPart,
)

NO_EXTENSIONS: frozenset[str] = frozenset()
"""The ``requested_extensions`` of a call that asks for none."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a call is authenticated as (see ``parley.server.Authenticator``)."""

    name: str
    """The caller: an API key's name, a user name, a token's subject, a certificate's
    common name."""
    scheme: str
    """The name, in the card's ``securitySchemes``, of the scheme that authenticated it."""
    scopes: frozenset[str] = frozenset()
    """What the credential grants (a token's ``scope``/``scp``), empty when nothing does."""
    claims: Mapping[str, Any] = field(default_factory=dict)
    """A token's verified claims, a certificate's subject fields; empty for keys and
    passwords."""

    @property
    def is_authenticated(self) -> bool:  # Starlette's ``request.user`` interface
        return True

    @property
    def display_name(self) -> str:
        return self.name


@dataclass(slots=True)
class CallContext:
    """Transport facts about one call, filled by the binding that received it."""

    headers: Mapping[str, str] = field(default_factory=dict)
    """Call metadata: HTTP headers (lower-case names) or gRPC metadata."""
    user: str | None = None
    """Who the call is authenticated as, when an authentication layer says so (the
    principal's name when parley authenticated it)."""
    principal: Principal | None = None
    """The authenticated caller, when the card declares security (``None`` otherwise)."""
    requested_extensions: frozenset[str] = frozenset()
    """Extension URIs the client asked for (``X-A2A-Extensions``)."""
    last_event_id: int | None = None
    """For a resumed stream: the sequence number of the last event the client saw."""
    state: dict[str, Any] = field(default_factory=dict)
    """Free room for middleware and agents to pass things along."""
    base_url: str | None = None
    """Where the client reached the server, ``scheme://host[:port]`` plus mount path
    (HTTP bindings; ``None`` over gRPC)."""
    protocol_version: str = "0.3"
    """The A2A version the call came in (``0.3``, ``1.0``, ``2025-early``), for logs and
    agents; the handler reads the version's row of ``parley.protocol._rules`` where the
    versions answer differently, and nothing else of it."""
    tenant: str | None = None
    """v1.0's ``tenant`` of the request (from its path or its field), if any."""

    @classmethod
    def from_headers(
        cls,
        headers: Mapping[str, str],
        user: str | None = None,
        base_url: str | None = None,
        principal: Principal | None = None,
    ) -> CallContext:
        """The call facts every binding reads the same way from its headers or metadata
        (lower-case names): ``X-A2A-Extensions`` and ``Last-Event-ID``."""
        extensions = headers.get("x-a2a-extensions")
        last_event_id = headers.get("last-event-id")
        # By position (headers, user, principal, requested_extensions, last_event_id,
        # state, base_url): a class called with keywords gets them packed into a dict
        # first (CPython 3.11 calls a Python ``__init__`` so), once for every request.
        return cls(
            headers,
            principal.name if principal is not None else user,
            principal,
            frozenset(uri.strip() for uri in extensions.split(",") if uri.strip())
            if extensions
            else NO_EXTENSIONS,
            int(last_event_id) if last_event_id and last_event_id.isdigit() else None,
            {},
            base_url,
        )


@dataclass(slots=True)
class RequestContext:
    """Everything an agent run gets to know about the message it is handling."""

    message: Message | None
    """The incoming message, with ``task_id`` and ``context_id`` filled in (``None``
    when the agent is asked to cancel)."""
    task_id: str
    context_id: str
    task: Task | None
    """The task as it was before this message (``None`` for a new task)."""
    configuration: MessageSendConfiguration | None = None
    metadata: dict[str, Any] | None = None
    """The request's ``metadata`` (extensions put their parameters here)."""
    related_tasks: list[Task] = field(default_factory=list)
    """The tasks named in ``message.reference_task_ids`` that this server knows."""
    call: CallContext = field(default_factory=CallContext)

    def get_user_input(self, separator: str = "\n") -> str:
        """The text parts of the incoming message, joined."""
        if self.message is None:
            return ""
        parts = self.message.parts
        if len(parts) == 1:
            text = parts[0].text if type(parts[0]) is TextPart else None
            if type(text) is str:  # the usual message: what the join gives, without a generator
                return text
        return separator.join(
            part.text for part in self.message.parts if isinstance(part, TextPart)
        )

    @property
    def history(self) -> list[Message]:
        """The task's earlier messages, oldest first (empty for a new task)."""
        if self.task is None or self.task.history is None:
            return []
        return list(self.task.history)
