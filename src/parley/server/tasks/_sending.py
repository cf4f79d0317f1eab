"""``message/send`` and ``message/stream``: a message starts a task or continues one.

A message without ``taskId`` starts a task (in its context, or a new one); with one, it
continues that task, which must be the caller's, open and not busy with an earlier
message. A message sent again in the same scope gets the first one's result instead
(see ``_idempotency``). ``Sends.begin`` does what the two operations share: it checks
the message, takes the run slot and starts the agent's run, and answers with the live
task and the sequence number its new events follow; the handler then waits for the
answer (send) or reads the events (stream).
"""

from __future__ import annotations

from collections.abc import Callable

from parley._speedups import with_ids
from parley.protocol import InvalidParamsError, TaskNotFoundError, is_terminal
from parley.protocol._rules import VersionRules, rules_for
from parley.server.agent._context import CallContext, RequestContext
from parley.server.agent._ids import new_ordered_id
from parley.server.auth._tenancy import may_use, scope_of
from parley.server.push._service import PushService
from parley.server.tasks._idempotency import Repeat, SentMessages
from parley.server.tasks._limits import Limits, check_history_length
from parley.server.tasks._live import LiveTask, busy
from parley.server.tasks._runs import TaskRuns
from parley.types import Message, MessageSendParams, NamedTaskSendParams, Task


class Sends:
    """Starts and continues tasks from messages for the request handler.

    ``push_service`` returns the push service for an operation, or raises the error a
    card without push notifications calls for."""

    def __init__(
        self,
        runs: TaskRuns,
        sent: SentMessages,
        limits: Limits,
        push_service: Callable[[str], PushService],
    ) -> None:
        self.runs = runs
        self.sent = sent
        self.limits = limits
        self.push_service = push_service

    async def begin(
        self, params: MessageSendParams, call: CallContext
    ) -> tuple[LiveTask, int] | Repeat:
        """Start or continue the task ``params`` name: the live task (its run started)
        and the sequence number the run's events follow, or the ``Repeat`` of an
        earlier send of the same message."""
        self.limits.check_message(params)
        configuration = params.configuration
        if configuration is not None:
            check_history_length(configuration.history_length)
            if configuration.push_notification_config is not None:
                push = self.push_service("set_push_config")
                await push.configs.check(configuration.push_notification_config)
        message = params.message
        if not message.message_id:
            raise InvalidParamsError(
                "messageId is required and may not be empty: each message needs an id of "
                "its own (a UUID), so a repeated send is never taken for another message"
            )
        owner = scope_of(call)
        scoped = message.task_id or message.context_id  # else a new context: no repeat
        if scoped:
            await self._check_scope(message, owner)  # before a repeat could answer
            repeat = await self.sent.earlier(message)  # idempotent send: see _idempotency
            if repeat is not None:
                return repeat
            if message.task_id and not await self._names_new_task(params):
                return await self._continue(params, message, call, owner)
        task_id = message.task_id or new_ordered_id()
        if scoped:
            repeat = await self.sent.claim(message, task_id)
            if repeat is not None:
                return repeat
        context_id = message.context_id or new_ordered_id()
        message = with_ids(message, task_id, context_id) or message.copied(
            task_id=task_id, context_id=context_id
        )
        related = await self._related_tasks(message, owner) if message.reference_task_ids else []
        pushed = await self._push_config_of(task_id, params, call) if configuration else False
        # No await from here on: the new task and its run slot are taken together.
        if self.runs.is_live(task_id):  # the caller's id, taken while we were claiming
            await self.sent.forget(message)
            raise _just_started(task_id)
        context = _context(params, message, task_id, context_id, call, related)
        # a new task has no push config yet, unless it came with one: no store read
        pushes = None if pushed else ()
        live = self.runs.start_new(
            task_id, context_id, message, owner or None, scoped, pushes, context
        )
        return live, 0

    async def _continue(
        self, params: MessageSendParams, message: Message, call: CallContext, owner: str | None
    ) -> tuple[LiveTask, int] | Repeat:
        assert message.task_id is not None
        async with self.runs.hold(message.task_id, owner) as live:
            task = live.task
            assert task is not None
            if message.context_id and message.context_id != task.context_id:
                raise InvalidParamsError(
                    f"Task {task.id} belongs to context {task.context_id}, not {message.context_id}"
                )
            rules = rules_for(call.protocol_version)
            _check_open(task, live.turn is not None, rules)
            repeat = await self.sent.claim(message, task.id)
            if repeat is not None:
                return repeat
            message = message.copied(context_id=task.context_id)
            related = await self._related_tasks(message, owner)
            if await self._push_config_of(task.id, params, call):
                await self.runs.push_configs_changed(task.id)
            try:
                # No await from here on: checked again, then the run slot is taken.
                _check_open(live.task or task, live.turn is not None, rules)
                async with self.runs.turn(live) as turn:
                    if turn is None:  # another process runs it
                        raise busy(live.task_id)
                    assert live.task is not None  # as the store has it, if it moved on
                    _check_open(live.task, False, rules)
                    ids = live.task_id, live.context_id
                    context = _context(params, message, *ids, call, related)
                    start = live.log.last_sequence
                    self.runs.start(live, turn, context)
                    return live, start
            except (InvalidParamsError, rules.message_to_terminal):
                await self.sent.forget(message)  # refused: the client may send it again
                raise

    async def _names_new_task(self, params: MessageSendParams) -> bool:
        """Whether ``params`` name a task by the caller's own id that does not exist yet
        (``NamedTaskSendParams``): it is then created with that id."""
        if not isinstance(params, NamedTaskSendParams):
            return False
        task_id = params.message.task_id
        assert task_id is not None
        async with self.runs.hold_if_any(task_id) as live:
            if live is None:
                return True
            if live.task is None:  # created by a request still setting up
                raise _just_started(task_id)
            return False

    async def _related_tasks(self, message: Message, owner: str | None) -> list[Task]:
        """The tasks ``referenceTaskIds`` name that exist and are the caller's (another
        principal's are left out, as unknown ids are)."""
        related: list[Task] = []
        for task_id in message.reference_task_ids or ():
            live = self.runs.peek(task_id)
            if live is not None and live.task is not None:
                if may_use(live.owner, owner):
                    related.append(live.task.model_copy())
                continue
            snapshot = await self.runs.store.get(task_id)
            if snapshot is not None and may_use(snapshot.owner, owner):
                related.append(snapshot.task)
        return related

    async def _check_scope(self, message: Message, owner: str | None) -> None:
        """A message may continue only the caller's task and join only the caller's
        context: another principal's is "not found", as if it did not exist. A task's
        owner is stored with its first event, before the server tells anyone its ids."""
        if owner is None:
            return
        if message.task_id:
            live = self.runs.peek(message.task_id)
            if live is not None:
                task_owner = live.owner
            else:
                snapshot = await self.runs.store.get(message.task_id)
                task_owner = owner if snapshot is None else snapshot.owner
            if not may_use(task_owner, owner):
                raise TaskNotFoundError(f"Task {message.task_id} was not found")
        if message.context_id:
            context_owner = await self.runs.store.context_owner(message.context_id)
            if context_owner is not None and not may_use(context_owner, owner):
                raise TaskNotFoundError(f"Context {message.context_id} was not found")

    async def _push_config_of(
        self, task_id: str, params: MessageSendParams, call: CallContext
    ) -> bool:
        """Save the push config a message/send carries (checked in ``begin``) for
        ``task_id``; whether there was one."""
        configuration = params.configuration
        config = configuration.push_notification_config if configuration else None
        if config is None:
            return False
        push = self.push_service("set_push_config")
        await push.configs.save(task_id, config, call.protocol_version)
        return True


def _context(
    params: MessageSendParams,
    message: Message,
    task_id: str,
    context_id: str,
    call: CallContext,
    related: list[Task],
) -> RequestContext:
    # message, task_id, context_id, task, configuration, metadata, related_tasks, call:
    # by position (see ``CallContext.from_headers``): no keywords' dict on every send
    return RequestContext(
        message, task_id, context_id, None, params.configuration, params.metadata,
        related, call,
    )  # fmt: skip


def _just_started(task_id: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"Task {task_id} was just started by another request; send again once it asks "
        "for input or finishes."
    )


def _check_open(task: Task, running: bool, rules: VersionRules) -> None:
    """Refuse a message to ``task`` in a terminal state (the error ``rules`` name), or
    while a run works on it (``InvalidParamsError``)."""
    if is_terminal(task.status.state):
        raise rules.message_to_terminal(
            f"Task {task.id} is {task.status.state.value}; a task in a terminal state "
            "cannot take more messages. Send without taskId to start a new task."
        )
    if running:
        raise InvalidParamsError(
            f"Task {task.id} is still working on an earlier message; send again once it "
            "asks for input or finishes, or cancel it first."
        )
