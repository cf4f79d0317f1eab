"""The API agents are written with: ``AgentExecutor``, ``EventSink`` and ``TaskUpdater``.

An agent implements ``execute`` (and optionally ``cancel``) and reports what it does by
emitting events into the sink: a ``Message`` for a direct reply, or a ``Task`` and
status and artifact updates for work that is tracked. ``TaskUpdater`` writes those
events for the common cases.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from parley._speedups import built_text_chunk
from parley.protocol import TaskNotCancelableError
from parley.server.agent._context import RequestContext
from parley.server.agent._ids import new_id, now
from parley.types import (
    Event,
    Message,
    Part,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.types._events import text_chunk

# The events parley builds for an agent are validated once each, from one dict with only
# the fields that are set, its status or artifact nested in it: ``Model(**fields)`` costs
# a fifth more (BaseModel.__init__'s keyword packing, and a check per field left at its
# default), and each validation of its own (a status, a part) more than nesting it.
# Typed here, not ``cast`` per call (a Python call each).
_new_status_update: Callable[[dict[str, Any]], TaskStatusUpdateEvent] = (
    TaskStatusUpdateEvent.__pydantic_validator__.validate_python
)
_new_artifact_update: Callable[[dict[str, Any]], TaskArtifactUpdateEvent] = (
    TaskArtifactUpdateEvent.__pydantic_validator__.validate_python
)


class EventSink(Protocol):
    """Where an agent run puts its events."""

    async def emit(self, event: Event) -> None:
        """Record ``event`` for the task; returns once it is in the task's log.

        Raises ``InvalidAgentResponseError`` for an event that does not fit the task
        (another task's id, a move out of a terminal state).
        """
        ...


class AgentExecutor(Protocol):
    """An agent, as the request handler drives it."""

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        """Handle ``context.message``, emitting events until the task reaches a terminal
        or interrupted state, or a direct ``Message`` reply is emitted.

        An exception ends the task ``failed`` with a safe message; the caller never sees
        its text. Returning without finishing the task also fails it.
        """
        ...

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        """Stop work on ``context.task`` and emit its ``canceled`` status.

        Raise ``TaskNotCancelableError`` to refuse. If this returns without emitting a
        terminal status, the handler records ``canceled`` itself.
        """
        ...


def check_agent(agent: object) -> AgentExecutor:
    """``agent`` if it can be driven as an ``AgentExecutor``; else a ``TypeError`` at
    start-up that says what to pass, rather than every task failing later."""
    if isinstance(agent, type):
        name = agent.__name__
        raise TypeError(
            f"the agent is the class {name}, not an agent: pass an instance, {name}(), "
            "to create_app / RequestHandler"
        )
    missing = [name for name in ("execute", "cancel") if not callable(getattr(agent, name, None))]
    if missing:
        raise TypeError(
            f"{agent!r} is not an agent: it has no {' or '.join(missing)} method. Pass an "
            "AgentExecutor (async execute(context, events) and cancel(context, events)), "
            "or an async function decorated with @agent"
        )
    return agent  # type: ignore[return-value]


@runtime_checkable
class ResumableAgent(Protocol):
    """An agent that can continue a task after a restart (opt-in, next to ``execute``)."""

    async def resume(self, context: RequestContext, events: EventSink) -> None:
        """Continue work on ``context.task`` (as stored: status, history, artifacts so
        far), emitting events as ``execute`` does. ``context.message`` is ``None``: no
        new message came; the last user message is the last ``user`` entry of the
        task's history. An exception fails the task, as in ``execute``."""
        ...


class CancelRefusingAgent:
    """Mix-in for agents that cannot be canceled."""

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        raise TaskNotCancelableError("This agent does not support canceling tasks")


def text_message(
    text: str,
    *,
    role: Role = Role.agent,
    task_id: str | None = None,
    context_id: str | None = None,
) -> Message:
    """A message with one text part."""
    return Message(
        message_id=new_id(),
        role=role,
        parts=[TextPart(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


class TaskUpdater:
    """Writes the events of one task for an agent.

    Every method emits one event into the sink, with the task and context ids of the
    run and a timestamp on each status.
    """

    def __init__(self, events: EventSink, task_id: str, context_id: str) -> None:
        self.events = events
        self.task_id = task_id
        self.context_id = context_id

    @classmethod
    def for_context(cls, events: EventSink, context: RequestContext) -> TaskUpdater:
        return cls(events, context.task_id, context.context_id)

    def new_agent_message(
        self, parts: Sequence[Part] | str, metadata: dict[str, Any] | None = None
    ) -> Message:
        """A message from the agent in this task (a ``str`` becomes one text part)."""
        return Message(
            message_id=new_id(),
            role=Role.agent,
            parts=[TextPart(text=parts)] if isinstance(parts, str) else list(parts),
            task_id=self.task_id,
            context_id=self.context_id,
            metadata=metadata,
        )

    async def update_status(
        self,
        state: TaskState,
        message: Message | str | None = None,
        *,
        final: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        await self.events.emit(self._status_update(state, message, final, metadata))

    def _status_update(
        self,
        state: TaskState,
        message: Message | str | None = None,
        final: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> TaskStatusUpdateEvent:
        """The event ``update_status`` emits."""
        if isinstance(message, str):
            message = self.new_agent_message(message)
        status: dict[str, Any] = {"state": state, "timestamp": now()}
        if message is not None:
            status["message"] = message
        event: dict[str, Any] = {
            "task_id": self.task_id,
            "context_id": self.context_id,
            "status": status,
            "final": final,
        }
        if metadata is not None:
            event["metadata"] = metadata
        return _new_status_update(event)

    async def submit(self, message: Message | str | None = None) -> None:
        await self.update_status(TaskState.submitted, message)

    async def start_work(self, message: Message | str | None = None) -> None:
        await self.update_status(TaskState.working, message)

    async def add_artifact(
        self,
        parts: Sequence[Part] | str,
        *,
        artifact_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        append: bool | None = None,
        last_chunk: bool | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Emit an artifact (or one chunk of it); returns its id for later chunks."""
        event = self._artifact_update(
            parts, artifact_id, name, description, append, last_chunk, metadata
        )
        await self.events.emit(event)
        return event.artifact.artifact_id

    def _artifact_update(
        self,
        parts: Sequence[Part] | str,
        artifact_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        append: bool | None = None,
        last_chunk: bool | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> TaskArtifactUpdateEvent:
        """The event ``add_artifact`` emits (a new artifact id when none is given)."""
        if isinstance(parts, str) and description is None and metadata is None:
            artifact_id = artifact_id or new_id()
            chunk = (self.task_id, self.context_id, artifact_id, parts, name, append, last_chunk)
            return built_text_chunk(*chunk) or text_chunk(*chunk)
        artifact: dict[str, Any] = {
            "artifact_id": artifact_id or new_id(),
            "parts": [{"kind": "text", "text": parts}] if isinstance(parts, str) else list(parts),
        }
        if name is not None:
            artifact["name"] = name
        if description is not None:
            artifact["description"] = description
        if metadata is not None:
            artifact["metadata"] = metadata
        event: dict[str, Any] = {
            "task_id": self.task_id,
            "context_id": self.context_id,
            "artifact": artifact,
        }
        if append is not None:
            event["append"] = append
        if last_chunk is not None:
            event["last_chunk"] = last_chunk
        return _new_artifact_update(event)

    async def complete(self, message: Message | str | None = None) -> None:
        await self.update_status(TaskState.completed, message, final=True)

    async def failed(self, message: Message | str | None = None) -> None:
        await self.update_status(TaskState.failed, message, final=True)

    async def reject(self, message: Message | str | None = None) -> None:
        await self.update_status(TaskState.rejected, message, final=True)

    async def cancel(self, message: Message | str | None = None) -> None:
        await self.update_status(TaskState.canceled, message, final=True)

    async def requires_input(self, message: Message | str | None = None) -> None:
        await self.update_status(TaskState.input_required, message, final=True)

    async def requires_auth(self, message: Message | str | None = None) -> None:
        await self.update_status(TaskState.auth_required, message, final=True)
