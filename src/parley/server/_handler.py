"""The request handler: every A2A operation, transport-agnostic.

All protocol behaviour lives here and only here; the bindings decode a request into the
params model of its operation, call the method of the same name (see
``parley.protocol.OPERATIONS``) and encode what it returns. The handler never knows
which binding or dialect a request came in on.

Objects returned by the handler may be live (the task the agent is still changing):
bindings encode them at once, before awaiting anything else.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from parley.protocol import (
    ACTIVE_STATES,
    BY_NAME,
    A2AError,
    AuthenticatedExtendedCardNotConfiguredError,
    Capability,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
    UnsupportedOperationError,
    ends_interaction,
    is_interrupted,
    is_terminal,
)
from parley.server._agent import AgentExecutor, check_agent
from parley.server._bus import Bus, push_note
from parley.server._cancel import Cancels
from parley.server._context import CallContext, RequestContext
from parley.server._idempotency import Repeat, SentMessages
from parley.server._ids import new_ordered_id
from parley.server._keys import SigningKeys
from parley.server._limits import DEFAULT_LIMITS, Limits
from parley.server._listing import list_tasks
from parley.server._live import LiveTask, may_use, scope_of
from parley.server._owners import DEFAULT_LEASE_TTL, Ownership
from parley.server._recovery import recover
from parley.server._retention import DEFAULT_RETENTION, Retention, RetentionJob
from parley.server._runs import TaskRuns
from parley.server.push._configs import PushSettings
from parley.server.push._service import PushService
from parley.stores import MemoryStore, Store
from parley.types import (
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    Event,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    ListTasksParams,
    ListTasksResult,
    Message,
    MessageSendParams,
    NamedTaskSendParams,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
)

ExtendedCardProvider = Callable[[CallContext], Awaitable[AgentCard]]
EventStream = AsyncIterator[tuple[int, Event]]
"""``(sequence number, event)`` pairs, in order; the sequence is the SSE ``id``."""


class RequestHandler:
    """Serves every operation of the operation table for one agent.

    ``extended_card`` is the card ``agent/getAuthenticatedExtendedCard`` returns: a card,
    or an async function of the call that returns one (and may raise
    ``UnauthenticatedError``) for cards that depend on who asks. ``limits`` bounds ids,
    ``referenceTaskIds`` and metadata (see ``Limits``).

    When the card declares ``capabilities.pushNotifications`` the handler serves the push
    config operations and delivers notifications (``push`` settings, signed with
    ``signing_keys``: see ``parley.server.push``).

    With a store several processes share (PostgreSQL), the handler takes a lease on
    each task it runs (``lease_ttl`` seconds, renewed by a heartbeat) and tells the
    other processes of new events over ``bus`` (PostgreSQL ``LISTEN/NOTIFY`` when none
    is given). See docs/deploy.md.
    """

    def __init__(
        self,
        agent: AgentExecutor,
        card: AgentCard,
        *,
        task_store: Store | None = None,
        extended_card: AgentCard | ExtendedCardProvider | None = None,
        retention: Retention | None = DEFAULT_RETENTION,
        push: PushSettings | None = None,
        signing_keys: SigningKeys | None = None,
        limits: Limits = DEFAULT_LIMITS,
        bus: Bus | None = None,
        lease_ttl: float = DEFAULT_LEASE_TTL,
    ) -> None:
        self.agent = check_agent(agent)
        self.limits = limits
        self.card = card
        self.task_store: Store = task_store if task_store is not None else MemoryStore()
        self.extended_card = extended_card
        self.capabilities = declared_capabilities(card)
        store = self.task_store
        owners = Ownership(store, lease_ttl) if store.shared else None
        if bus is None and store.shared:
            from parley.stores.sql import PostgresBus, SQLStore

            if isinstance(store, SQLStore):
                bus = PostgresBus(store.engine)
        self.runs = TaskRuns(agent, store, owners, bus)
        self.cancels = Cancels(agent, self.runs)
        self.sent = SentMessages(self.runs)
        self.retention = None if retention is None else RetentionJob(self.task_store, retention)
        self.signing_keys = signing_keys if signing_keys is not None else SigningKeys.generate()
        """What the agent signs with (push notifications; the app publishes the keys)."""
        self.push: PushService | None = None
        if card.capabilities.push_notifications:
            settings = push if push is not None else PushSettings()
            self.push = PushService(
                self.task_store, self.signing_keys, settings, issuer=card.url or None
            )
            self.runs.notifications = self.push

    # -- message/send, message/stream ------------------------------------------------

    async def send_message(
        self, params: MessageSendParams, call: CallContext | None = None
    ) -> Task | Message:
        """Start or continue a task and answer with the task (or the agent's direct reply).

        Waits for the run to end (terminal or interrupted state) unless
        ``configuration.blocking`` is false, then answers at the first event.
        """
        begun = await self._begin(params, call or CallContext())
        configuration = params.configuration
        blocking = configuration is None or configuration.blocking is not False
        history_length = configuration.history_length if configuration else None
        if isinstance(begun, Repeat):
            repeated = await begun.result(blocking)
            return repeated if isinstance(repeated, Message) else _trim(repeated, history_length)
        live, start = begun
        result = await live.log.first(start, ends_interaction if blocking else None)
        if isinstance(result, Message):
            await self.sent.reply(params.message, result)
            return result
        assert live.task is not None
        return _trim(live.task, history_length)

    async def stream_message(
        self, params: MessageSendParams, call: CallContext | None = None
    ) -> EventStream:
        """Start or continue a task and stream its events until the run ends."""
        self._require("stream_message")
        begun = await self._begin(params, call or CallContext())
        if isinstance(begun, Repeat):
            return begun.stream()
        live, start = begun
        return live.log.read(start, ends_interaction)

    async def _begin(
        self, params: MessageSendParams, call: CallContext
    ) -> tuple[LiveTask, int] | Repeat:
        self.limits.check_message(params)
        configuration = params.configuration
        if configuration is not None:
            _check_history_length(configuration.history_length)
            if configuration.push_notification_config is not None:
                push = self._require_push("set_push_config")
                await push.configs.check(configuration.push_notification_config)
        message = params.message
        if not message.message_id:
            raise InvalidParamsError(
                "messageId is required and may not be empty: each message needs an id of "
                "its own (a UUID), so a repeated send is never taken for another message"
            )
        owner = _caller(call)
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
        message = message.copied(task_id=task_id, context_id=context_id)
        related = await self._related_tasks(message, owner) if message.reference_task_ids else []
        pushed = await self._push_config_of(task_id, params, call) if configuration else False
        # No await from here on: the new task and its run slot are taken together.
        if task_id in self.runs.live:  # the caller's id, taken while we were claiming
            await self.sent.forget(message)
            raise _just_started(task_id)
        live = self.runs.create(task_id, context_id, message, owner or None)
        if not pushed:
            live.push_configs = ()  # a new task has none yet: no store read per new task
        turn = self.runs.begin(live)  # the lease, with a shared store, the run takes
        context = self._context(params, message, live, call, related)
        self.runs.start(live, turn, context)
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
            _check_open(task, live.turn is not None)
            repeat = await self.sent.claim(message, task.id)
            if repeat is not None:
                return repeat
            message = message.copied(context_id=task.context_id)
            related = await self._related_tasks(message, owner)
            if await self._push_config_of(task.id, params, call):
                await self._push_configs_changed(task.id)
            # No await from here on: checked again, then the run slot is taken.
            try:
                _check_open(live.task or task, live.turn is not None)
                turn = self.runs.begin(live)
                await self.runs.own(live, turn)  # another process may run it, or have moved it on
                assert live.task is not None
                if is_terminal(live.task.status.state):
                    await turn.give_up_lease()
                    turn.end()
                    _check_open(live.task, False)
            except InvalidParamsError:
                await self.sent.forget(message)  # refused: the client may send it again
                raise
            context = self._context(params, message, live, call, related)
            start = live.log.last_sequence
            live.holders += 1  # the run's own hold, let go when it ends
            self.runs.start(live, turn, context)
            return live, start

    def _context(
        self,
        params: MessageSendParams,
        message: Message,
        live: LiveTask,
        call: CallContext,
        related: list[Task],
    ) -> RequestContext:
        return RequestContext(
            message=message,
            task_id=live.task_id,
            context_id=live.context_id,
            task=None,
            configuration=params.configuration,
            metadata=params.metadata,
            related_tasks=related,
            call=call,
        )

    async def _names_new_task(self, params: MessageSendParams) -> bool:
        """Whether ``params`` name a task by the caller's own id that does not exist yet
        (``NamedTaskSendParams``): it is then created with that id."""
        if not isinstance(params, NamedTaskSendParams):
            return False
        task_id = params.message.task_id
        assert task_id is not None
        live = await self.runs.attach(task_id)
        if live is None:
            return True
        self.runs.let_go(live)
        if live.task is None:  # created by a request still setting up
            raise _just_started(task_id)
        return False

    async def _related_tasks(self, message: Message, owner: str | None) -> list[Task]:
        """The tasks ``referenceTaskIds`` name that exist and are the caller's (another
        principal's are left out, as unknown ids are)."""
        related: list[Task] = []
        for task_id in message.reference_task_ids or ():
            live = self.runs.live.get(task_id)
            if live is not None and live.task is not None:
                if may_use(live.owner, owner):
                    related.append(live.task.model_copy())
                continue
            snapshot = await self.task_store.get(task_id)
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
            live = self.runs.live.get(message.task_id)
            if live is not None:
                task_owner = live.owner
            else:
                snapshot = await self.task_store.get(message.task_id)
                task_owner = owner if snapshot is None else snapshot.owner
            if not may_use(task_owner, owner):
                raise _not_found(message.task_id)
        if message.context_id:
            context_owner = await self.task_store.context_owner(message.context_id)
            if context_owner is not None and not may_use(context_owner, owner):
                raise TaskNotFoundError(f"Context {message.context_id} was not found")

    # -- tasks/get, tasks/cancel, tasks/resubscribe ----------------------------------

    async def get_task(self, params: TaskQueryParams, call: CallContext | None = None) -> Task:
        """The task as it is now, its history trimmed to ``historyLength``."""
        self.limits.check_id("id", params.id)
        _check_history_length(params.history_length)
        owner = _caller(call)
        live = self.runs.live.get(params.id)
        if live is not None and live.task is not None and live.turn is not None:
            if not may_use(live.owner, owner):
                raise _not_found(params.id)
            return _trim(live.task, params.history_length)
        snapshot = await self.task_store.get(params.id)
        if snapshot is None or not may_use(snapshot.owner, owner):
            raise _not_found(params.id)
        return _trim(snapshot.task, params.history_length)

    async def list_tasks(
        self, params: ListTasksParams, call: CallContext | None = None
    ) -> ListTasksResult:
        """One page of the tasks matching the filters, latest status timestamp first.

        Only the caller's tasks when the agent declares security (task ownership).
        Raises ``InvalidParamsError`` for a bad page size, history length, time or page
        token, and ``UnsupportedOperationError`` when the task store cannot list.
        """
        if not hasattr(self.task_store, "list_tasks"):
            raise UnsupportedOperationError("This agent's task store cannot list tasks")
        owner = _caller(call)
        return await list_tasks(self.task_store, self.runs.live, params, owner)

    async def cancel_task(self, params: TaskIdParams, call: CallContext | None = None) -> Task:
        """Ask the agent to cancel the task; answers with the task, ``canceled``.

        Idempotent: a task being canceled or canceled already answers with the canceled
        task. Raises ``TaskNotCancelableError`` for a task in another terminal state, or
        when the agent refuses. Reaches the run on whichever process runs it.
        """
        self.limits.check_id("id", params.id)
        self.limits.check_metadata("metadata", params.metadata)
        return await self.cancels.cancel(params.id, params.metadata, call or CallContext())

    async def resubscribe(
        self, params: TaskIdParams, call: CallContext | None = None
    ) -> EventStream:
        """Stream a task's events: the current Task first, then live events until the run
        ends. With ``call.last_event_id`` (the ``Last-Event-ID`` the client saw), replay
        every event after it instead, with no gap and no duplicate. A task that asked for
        input while its run is still finishing is followed through its next run; a task
        waiting or finished, or running in no run of this process, ends the stream after
        the Task.
        """
        self._require("resubscribe")
        self.limits.check_id("id", params.id)
        owner = _caller(call)
        async with self.runs.hold(params.id, owner):
            pass  # raises TaskNotFoundError now rather than in the stream
        after = call.last_event_id if call is not None else None
        return self._follow(params.id, after, owner)

    async def _follow(self, task_id: str, after: int | None, owner: str | None) -> EventStream:
        async with self.runs.hold(task_id, owner) as live:
            elsewhere = await self._run_elsewhere(live)
            assert live.task is not None
            log, replayed = live.log, False
            position = None if after is None else min(after, log.last_sequence)
            if position is not None and position < log.last_sequence:
                stored = await self.task_store.events(task_id, position)
                if not stored or stored[0].sequence != position + 1:
                    position = None  # those events are gone: the Task stands in for them
                for entry in stored if position is not None else ():
                    yield entry.sequence, entry.event
                    if ends_interaction(entry.event):
                        return
                    position, replayed = entry.sequence, True
            if position is None or not (replayed or elsewhere or _followed(live)):
                position = log.last_sequence
                yield position, _trim(live.task, None)
            if elsewhere or _followed(live):
                async for item in log.read(position, ends_interaction):
                    yield item

    async def _run_elsewhere(self, live: LiveTask) -> bool:
        """With a shared store: bring ``live`` up to date, and say whether the task is
        active but not run here. Another process runs it (its events come here through
        the bus), or its process died and its lease expired, and the recovery sweep of
        some process (this one's too) settles it soon: either way there is more to wait
        for."""
        if self.runs.owners is None or live.turn is not None:
            return False
        await self.runs.catch_up(live)
        assert live.task is not None
        return live.task.status.state in ACTIVE_STATES

    def _heard(self, note: str) -> None:
        """A note from another process (see ``_bus``)."""
        kind, _, rest = note.partition(" ")
        if kind == "e":
            sequence, _, task_id = rest.partition(" ")
            self.runs.heard(task_id, int(sequence))
        elif kind == "c":
            self.cancels.heard(rest)
        elif kind == "p":
            live = self.runs.live.get(rest)
            if live is not None:
                live.push_configs_changed()
        elif kind == "*":
            self.runs.heard("*", None)
            for live in self.runs.live.values():  # a push note may be among those missed
                live.push_configs_changed()

    # -- push notifications, extended card ---------------------------------------------

    async def set_push_config(
        self, params: TaskPushNotificationConfig, call: CallContext | None = None
    ) -> TaskPushNotificationConfig:
        """Add or replace one of the task's push configs (spec 7.5); its id is the
        task's when none is given. Raises ``TaskNotFoundError``, or ``InvalidParamsError``
        for a URL or authentication the agent will not deliver to."""
        push = self._require_push("set_push_config")
        owner = _caller(call)
        async with self.runs.hold(params.task_id, owner) as live:
            await push.configs.check(params.push_notification_config)
            stored = await push.configs.save(
                live.task_id, params.push_notification_config, _version(call)
            )
            await self._push_configs_changed(live.task_id)
            return stored

    async def _push_config_of(
        self, task_id: str, params: MessageSendParams, call: CallContext | None
    ) -> bool:
        """Save the push config a message/send carries (checked in ``_begin``) for
        ``task_id``; whether there was one."""
        configuration = params.configuration
        config = configuration.push_notification_config if configuration else None
        if config is None:
            return False
        push = self._require_push("set_push_config")
        await push.configs.save(task_id, config, _version(call))
        return True

    async def get_push_config(
        self, params: GetTaskPushNotificationConfigParams, call: CallContext | None = None
    ) -> TaskPushNotificationConfig:
        """One push config of the task (spec 7.6): the one with the task's id when no
        config id is given."""
        push = self._require_push("get_push_config")
        await self._require_task(params.id, call)
        return await push.configs.get(params.id, params.push_notification_config_id)

    async def list_push_configs(
        self, params: ListTaskPushNotificationConfigParams, call: CallContext | None = None
    ) -> list[TaskPushNotificationConfig]:
        """Every push config of the task (spec 7.7)."""
        push = self._require_push("list_push_configs")
        await self._require_task(params.id, call)
        return await push.configs.list(params.id)

    async def delete_push_config(
        self, params: DeleteTaskPushNotificationConfigParams, call: CallContext | None = None
    ) -> None:
        """Remove one push config of the task (spec 7.8); no error if it has no such one."""
        push = self._require_push("delete_push_config")
        await self._require_task(params.id, call)
        await push.configs.delete(params.id, params.push_notification_config_id)
        await self._push_configs_changed(params.id)

    async def _push_configs_changed(self, task_id: str) -> None:
        """One of the task's push configs was just stored or deleted: its next event
        reads them again, here and, through the bus, in the process that runs it."""
        live = self.runs.live.get(task_id)
        if live is not None:
            live.push_configs_changed()
        bus = self.runs.bus
        if bus is not None:
            await bus.send(push_note(task_id))

    async def _require_task(self, task_id: str, call: CallContext | None) -> None:
        """Raise ``TaskNotFoundError`` unless the task exists and is the caller's."""
        owner = _caller(call)
        live = self.runs.live.get(task_id)
        if live is not None and live.task is not None:
            if not may_use(live.owner, owner):
                raise _not_found(task_id)
            return
        snapshot = await self.task_store.get(task_id)
        if snapshot is None or not may_use(snapshot.owner, owner):
            raise _not_found(task_id)

    async def get_extended_card(
        self, params: None = None, call: CallContext | None = None
    ) -> AgentCard:
        """The authenticated extended card, when one is configured."""
        self._require("get_extended_card")
        extended = self.extended_card
        if extended is None:
            raise AuthenticatedExtendedCardNotConfiguredError(
                "This agent has no authenticated extended card"
            )
        if isinstance(extended, AgentCard):
            return extended
        return await extended(call or CallContext())

    def _require(self, operation: str) -> None:
        """Refuse ``operation`` when the card does not declare the capability the
        operation table says it needs (spec 5.5.2, 7.10)."""
        capability = BY_NAME[operation].capability
        if capability is not None and capability not in self.capabilities:
            raise _REFUSALS[capability]()

    def _require_push(self, operation: str) -> PushService:
        self._require(operation)
        assert self.push is not None  # the card declares push, so the handler made it
        return self.push

    async def start(self) -> None:
        """Server start-up: settle the tasks a previous process left running (see
        ``_recovery``) and start removing expired tasks (see ``Retention``)."""
        bus, owners = self.runs.bus, self.runs.owners
        await recover(self.runs)  # first: a store that cannot be used fails the start here
        if bus is not None:
            await bus.start(self._heard)
        if owners is not None:
            runs = self.runs
            owners.start(lost=runs.lost_leases, sweep=lambda: recover(runs), holding=runs.holding)
        if self.retention is not None:
            self.retention.start(after_sweep=self.runs.forget_missing)
        if self.push is not None:
            self.push.start()

    async def aclose(self) -> None:
        """Stop every agent run still going, and the retention job."""
        try:
            if self.retention is not None:
                await self.retention.aclose()
            if self.runs.owners is not None:
                await self.runs.owners.aclose()
            await self.runs.aclose()
        finally:  # whatever stopping the runs met: the connections are closed
            try:
                if self.push is not None:
                    await self.push.aclose()
            finally:
                if self.runs.bus is not None:
                    await self.runs.bus.aclose()


def declared_capabilities(card: AgentCard) -> frozenset[Capability]:
    """The capabilities ``card`` declares (each is a field of the card)."""
    declared = {
        Capability.streaming: card.capabilities.streaming,
        Capability.push_notifications: card.capabilities.push_notifications,
        Capability.extended_card: card.supports_authenticated_extended_card,
    }
    return frozenset(capability for capability, on in declared.items() if on)


_REFUSALS: dict[Capability, Callable[[], A2AError]] = {
    Capability.streaming: lambda: UnsupportedOperationError(
        "This agent does not stream (its card says capabilities.streaming is false)"
    ),
    Capability.push_notifications: lambda: PushNotificationNotSupportedError(
        "Push notifications are not supported by this agent"
    ),
    Capability.extended_card: lambda: AuthenticatedExtendedCardNotConfiguredError(
        "This agent has no authenticated extended card"
    ),
}


def _just_started(task_id: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"Task {task_id} was just started by another request; send again once it asks "
        "for input or finishes."
    )


_caller = scope_of
"""Who asks, as a task owner (principal and tenant; ``None``: the server itself, no
scoping)."""


def _version(call: CallContext | None) -> str:
    """The A2A version a push config is set in: the shape of its notifications (the
    only thing the version of a call changes here, and only as data, not behaviour)."""
    return call.protocol_version if call is not None else "0.3"


def _not_found(task_id: str) -> TaskNotFoundError:
    return TaskNotFoundError(f"Task {task_id} was not found")


def _check_history_length(history_length: int | None) -> None:
    if history_length is not None and history_length < 0:
        raise InvalidParamsError(f"historyLength must be 0 or more, not {history_length}")


def _trim(task: Task, history_length: int | None) -> Task:
    """``task`` with at most ``history_length`` of its latest messages."""
    history = task.history
    if history_length is None or history is None or len(history) <= history_length:
        return task
    kept = history[len(history) - history_length :] if history_length else []
    return task.model_copy(update={"history": kept})


def _check_open(task: Task, running: bool) -> None:
    if is_terminal(task.status.state):
        raise InvalidParamsError(
            f"Task {task.id} is {task.status.state.value}; a task in a terminal state "
            "cannot take more messages. Send without taskId to start a new task."
        )
    if running:
        raise InvalidParamsError(
            f"Task {task.id} is still working on an earlier message; send again once it "
            "asks for input or finishes, or cancel it first."
        )


def _followed(live: LiveTask) -> bool:
    """Whether a resubscriber has more to wait for here: a run of this process, or, for
    a task that asked for input while its run is still finishing, the next run."""
    assert live.task is not None
    if live.turn is not None:
        return True
    return is_interrupted(live.task.status.state) and live.winding_down
