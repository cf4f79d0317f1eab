"""The short way to write an agent: one async function, or an async generator.

    @agent
    async def echo(ctx: AgentContext) -> AsyncIterator[str]:
        yield f"You said: {ctx.text}"

What the function yields (or returns) becomes the task's output:

- ``str``, a part, or a list of parts: a chunk of the response artifact (chunks after the
  first are appended to it, so a client sees one artifact grow);
- an ``Artifact``: an artifact of its own;
- ``InputRequired(...)`` / ``AuthRequired(...)``: the task waits for the client; the run
  ends, and the client's next message calls the function again with the whole history;
- a ``Message`` returned before anything else: a direct reply, no task.

The task comes into being at the first output, already ``working`` (a new task skips
``submitted``: the function is running from the moment it is called). When the function
ends the task completes; ``raise Rejected("why")`` rejects it; any
other exception fails it with a safe message (the text stays in the server log).

The events of the outputs are held back while the function runs without waiting on
anything, and emitted together, in one store write, as soon as it awaits something that
is not ready, or ends (``_Run``). No one could see them sooner: a reader runs only when
the run waits. An echo that yields its answer and returns is one write of three events
(the task, ``working``; the artifact; ``completed``) rather than three. What an agent
emits itself (``ctx.updater``, ``ctx.progress``) goes out at once, after what is held.
"""

from __future__ import annotations

import types
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from parley.server.agent._agent import EventSink, TaskUpdater
from parley.server.agent._context import RequestContext
from parley.server.agent._ids import now
from parley.types import (
    Artifact,
    DataPart,
    Event,
    FilePart,
    Message,
    Part,
    Task,
    TaskState,
    TextPart,
)

_new_task: Callable[[dict[str, Any]], Task] = Task.__pydantic_validator__.validate_python
"""One validation from a dict (see ``_agent``); typed here, not ``cast`` per call."""


@dataclass(frozen=True, slots=True)
class InputRequired:
    """Ask the client for more input; the task waits in ``input-required``."""

    text: str


@dataclass(frozen=True, slots=True)
class AuthRequired:
    """Ask the client for credentials; the task waits in ``auth-required``."""

    text: str


class Rejected(Exception):
    """Raise to reject the task; the message is shown to the client."""


Output: TypeAlias = str | Part | Sequence[Part] | Artifact | Message | InputRequired | AuthRequired
AgentFunction: TypeAlias = Callable[
    ["AgentContext"], AsyncIterator[Output] | Awaitable[Output | None]
]


class AgentContext:
    """What an agent function gets: the request, and ways to report progress."""

    def __init__(self, request: RequestContext, updater: TaskUpdater) -> None:
        self.request = request
        self.updater = updater
        self._working = False

    @property
    def text(self) -> str:
        """The text of the incoming message."""
        return self.request.get_user_input()

    @property
    def message(self) -> Message | None:
        return self.request.message

    @property
    def task(self) -> Task | None:
        """The task before this message (``None`` on the first turn)."""
        return self.request.task

    @property
    def history(self) -> list[Message]:
        return self.request.history

    @property
    def task_id(self) -> str:
        return self.request.task_id

    @property
    def context_id(self) -> str:
        return self.request.context_id

    async def progress(self, text: str) -> None:
        """Report progress: a ``working`` status carrying ``text``."""
        updater = self.updater
        await updater.events.emit(self._work(updater.new_agent_message(text)))

    async def start(self) -> None:
        """Mark the task ``working``, once (outputs and the end of the run call this)."""
        if not self._working:
            await self.updater.events.emit(self._work(None))

    def _work(self, message: Message | None) -> Event:
        """The event that says the task is working (with ``message``)."""
        first = not self._working and self.request.task is None
        self._working = True
        if not first:
            return self.updater._status_update(TaskState.working, message)
        # A new task is created ``working``: the function runs from the moment it is
        # called, so a ``submitted`` task followed at once by a ``working`` status would
        # be one more event for every reader, store and stream to carry, saying nothing.
        status: dict[str, Any] = {"state": TaskState.working, "timestamp": now()}
        if message is not None:
            status["message"] = message
        request = self.request
        task = {"id": request.task_id, "context_id": request.context_id, "status": status}
        return _new_task(task)


class FunctionAgent:
    """An ``AgentExecutor`` that runs an agent function (see the module docs)."""

    def __init__(self, function: AgentFunction, *, artifact_name: str = "response") -> None:
        self.function = function
        self.artifact_name = artifact_name
        self.__name__ = getattr(function, "__name__", "agent")
        self.__doc__ = function.__doc__

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        run = _Run(events, self.artifact_name)
        ctx = run.ctx = AgentContext(context, TaskUpdater(run, context.task_id, context.context_id))
        try:
            try:
                result = self.function(ctx)
                if isinstance(result, types.AsyncGeneratorType):
                    following = result.__anext__
                    while True:
                        # ``run.step`` written out: most outputs come without a wait
                        # (a coroutine less per output)
                        steps = following().__await__()
                        try:
                            waiting_on = steps.send(None)
                        except StopIteration as done:
                            item = done.value
                        except StopAsyncIteration:
                            break
                        else:
                            try:
                                item = await run.wait(steps, waiting_on)
                            except StopAsyncIteration:
                                break
                        if run.output(item):
                            return
                else:
                    returned: Output | None = await run.step(result)  # type: ignore[arg-type]
                    if returned is not None and run.output(returned):
                        return
            except Rejected as rejection:
                run.end(TaskState.rejected, str(rejection) or None)
                return
            run.start()
            run.end(TaskState.completed)
        finally:
            try:
                await run.flush()  # on every way out: what the function output before it failed
            finally:
                del run.ctx  # no cycle (run -> ctx -> updater -> run) left for the collector

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        await TaskUpdater.for_context(events, context).cancel()


_T = TypeVar("_T")


class _Run:
    """One run of an agent function: turns its outputs into events and holds them until
    ``flush`` (see the module docs), which ``step`` calls when the function is about to
    wait. It is also the sink of ``ctx.updater``: what the agent emits itself goes out
    at once, after what is held (``EventSink``'s promise: stored when ``emit`` returns).
    One object for the three roles: a run made five small objects before."""

    __slots__ = ("artifact_id", "artifact_name", "ctx", "held", "sink")

    ctx: AgentContext
    """The run's context, set once it is made (it holds the run, as its updater's sink)."""

    def __init__(self, sink: EventSink, artifact_name: str) -> None:
        self.sink = sink
        self.held: list[Event] = []
        self.artifact_name = artifact_name
        self.artifact_id: str | None = None

    async def emit(self, event: Event) -> None:
        await self.flush()
        await self.sink.emit(event)

    async def flush(self) -> None:
        held = self.held
        if not held:
            return
        self.held = []
        emit_many = getattr(self.sink, "emit_many", None)
        if emit_many is not None:
            await emit_many(held)
            return
        for event in held:
            await self.sink.emit(event)

    async def step(self, awaitable: Awaitable[_T]) -> _T:
        """Await ``awaitable`` (the function's next step); when it would wait, first
        emit what is held. Driven by hand: it runs until it waits or is done."""
        steps = awaitable.__await__()
        try:
            waiting_on = steps.send(None)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        return await self.wait(steps, waiting_on)

    async def wait(self, steps: Generator[Any, Any, _T], waiting_on: Any) -> _T:
        """Emit what is held, then go on driving ``steps`` (a step that waits on
        ``waiting_on``) to its end."""
        try:
            await self.flush()
        except BaseException:
            steps.close()  # unwound where it waits, as if the error reached it there
            raise
        return await _resume(steps, waiting_on)

    def start(self) -> None:
        """``ctx.start()``, held."""
        ctx = self.ctx
        if not ctx._working:
            self.held.append(ctx._work(None))

    def end(self, state: TaskState, text: str | None = None) -> None:
        """The run's final status, held."""
        self.held.append(self.ctx.updater._status_update(state, text, True))

    def output(self, item: Output) -> bool:
        """Hold the events of one output; True when it ended the run."""
        if type(item) is str:  # the usual output, first: the checks below are ABC's
            self.start()
            return self._chunk(item)
        ctx = self.ctx
        updater = ctx.updater
        held = self.held
        if isinstance(item, Message):
            if not ctx._working and self.artifact_id is None and ctx.task is None:
                # A direct reply: no task exists, so the message names only the context.
                held.append(item.model_copy(update={"context_id": ctx.context_id, "task_id": None}))
                return True
            self.start()
            message = item.model_copy(update=_ids(ctx))
            held.append(updater._status_update(TaskState.working, message))
            return False
        self.start()
        if isinstance(item, InputRequired):
            self.end(TaskState.input_required, item.text)
            return True
        if isinstance(item, AuthRequired):
            self.end(TaskState.auth_required, item.text)
            return True
        if isinstance(item, Artifact):
            held.append(
                updater._artifact_update(
                    item.parts, item.artifact_id, item.name, item.description, None, None,
                    item.metadata,
                )
            )  # fmt: skip
            return False
        return self._chunk(_parts(item))

    def _chunk(self, parts: str | list[Part]) -> bool:
        """Hold the event of a chunk of the response artifact."""
        first = self.artifact_id is None
        event = self.ctx.updater._artifact_update(
            parts,
            self.artifact_id,
            self.artifact_name if first else None,
            append=None if first else True,
        )
        self.artifact_id = event.artifact.artifact_id
        self.held.append(event)
        return False


@types.coroutine
def _resume(steps: Generator[Any, Any, _T], waiting_on: Any) -> Generator[Any, Any, _T]:
    """Go on driving ``steps``, which waits on ``waiting_on``, in the calling task: what
    it waits on goes up to the task, and what the task sends or throws goes down to it."""
    while True:
        try:
            sent = yield waiting_on
        except GeneratorExit:
            steps.close()
            raise
        except BaseException as error:
            try:
                waiting_on = steps.throw(error)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
        else:
            try:
                waiting_on = steps.send(sent)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]


def _ids(ctx: AgentContext) -> dict[str, Any]:
    return {"task_id": ctx.task_id, "context_id": ctx.context_id}


def _parts(item: str | Part | Sequence[Part]) -> str | list[Part]:
    """The parts of a chunk; text as it is (its part is made with its event: a ``str``
    of a subclass comes here)."""
    if isinstance(item, str):
        return item
    if isinstance(item, TextPart | FilePart | DataPart):
        return [item]
    return list(item)


def agent(function: AgentFunction | None = None, *, artifact_name: str = "response") -> Any:
    """Turn an agent function into an ``AgentExecutor``; usable as ``@agent`` or
    ``@agent(artifact_name=...)``."""
    if function is None:
        return lambda fn: FunctionAgent(fn, artifact_name=artifact_name)
    return FunctionAgent(function, artifact_name=artifact_name)
