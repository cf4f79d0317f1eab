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
from typing import TYPE_CHECKING

from parley.protocol import (
    BY_NAME,
    A2AError,
    AuthenticatedExtendedCardNotConfiguredError,
    Capability,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
    UnsupportedOperationError,
    ends_interaction,
    is_interrupted,
    is_terminal,
)
from parley.protocol._errors import shorten
from parley.protocol._rules import VersionRules, rules_for
from parley.server.agent._agent import AgentExecutor, check_agent
from parley.server.agent._context import CallContext
from parley.server.auth._keys import SigningKeys
from parley.server.auth._tenancy import may_use, scope_of
from parley.server.push._configs import PushSettings
from parley.server.push._service import PushService
from parley.server.tasks._bus import Bus, bus_of, listening
from parley.server.tasks._cancel import Cancels
from parley.server.tasks._idempotency import Repeat, SentMessages
from parley.server.tasks._limits import DEFAULT_LIMITS, Limits, check_history_length
from parley.server.tasks._listing import list_tasks
from parley.server.tasks._live import LiveTask
from parley.server.tasks._owners import DEFAULT_LEASE_TTL, Ownership
from parley.server.tasks._recovery import recover
from parley.server.tasks._retention import DEFAULT_RETENTION, Retention, RetentionJob
from parley.server.tasks._runs import TaskRuns
from parley.server.tasks._sending import Sends
from parley.stores import MemoryStore, Store
from parley.telemetry import open_telemetry
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
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskStatusUpdateEvent,
)

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from parley.telemetry import Telemetry

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

    Spans and metrics go to ``tracer_provider`` and ``meter_provider``, or to the global
    OpenTelemetry providers when those are set (see docs/observability.md).
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
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
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
            bus = bus_of(store)  # the store opener's: PostgreSQL's LISTEN/NOTIFY
        self.runs = TaskRuns(agent, store, owners, bus)
        self.telemetry = self.runs.telemetry = open_telemetry(
            tracer_provider, meter_provider, agent_name=card.name
        )
        """Where spans and metrics go (``None``: nowhere; see ``parley.telemetry``)."""
        if self.telemetry is not None:
            _trace_store(self.telemetry, store)
        self.cancels = Cancels(agent, self.runs)
        self.runs.follower.on_cancel = self.cancels.heard
        self.sent = SentMessages(self.runs)
        self.sends = Sends(self.runs, self.sent, limits, self._require_push)
        self.retention = None if retention is None else RetentionJob(self.task_store, retention)
        self.signing_keys = signing_keys if signing_keys is not None else SigningKeys.generate()
        """What the agent signs with (push notifications; the app publishes the keys)."""
        self.push: PushService | None = None
        if card.capabilities.push_notifications:
            settings = push if push is not None else PushSettings()
            self.push = PushService(
                self.task_store,
                self.signing_keys,
                settings,
                issuer=card.url or None,
                telemetry=self.telemetry,
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
        begun = await self.sends.begin(params, call or CallContext())
        configuration = params.configuration
        blocking = configuration is None or configuration.blocking is not False
        history_length = configuration.history_length if configuration else None
        if isinstance(begun, Repeat):
            repeated = await begun.result(blocking)
            return repeated if isinstance(repeated, Message) else _trim(repeated, history_length)
        live, start = begun
        result = await live.log.first(start, ends_interaction if blocking else None)
        # a status update, usually: asked first (a model's isinstance that fails is slow)
        if type(result) is not TaskStatusUpdateEvent and isinstance(result, Message):
            return result  # recorded by the run for a repeat (``Publisher._keep_reply``)
        assert live.task is not None
        return _trim(live.task, history_length)

    async def stream_message(
        self, params: MessageSendParams, call: CallContext | None = None
    ) -> EventStream:
        """Start or continue a task and stream its events until the run ends."""
        self._require("stream_message")
        begun = await self.sends.begin(params, call or CallContext())
        if isinstance(begun, Repeat):
            return begun.stream()
        live, start = begun
        return live.log.read(start, ends_interaction)

    # -- tasks/get, tasks/cancel, tasks/resubscribe ----------------------------------

    async def get_task(self, params: TaskQueryParams, call: CallContext | None = None) -> Task:
        """The task as it is now, its history trimmed to ``historyLength``."""
        self.limits.check_request(params)
        check_history_length(params.history_length)
        owner = _caller(call)
        live = self.runs.running(params.id)
        if live is not None and live.task is not None:
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
        self.limits.check_request(params)
        owner = _caller(call)
        return await list_tasks(self.task_store, self.runs.running, params, owner)

    async def cancel_task(self, params: TaskIdParams, call: CallContext | None = None) -> Task:
        """Ask the agent to cancel the task; answers with the task, ``canceled``.

        Idempotent: a task being canceled or canceled already answers with the canceled
        task. Raises ``TaskNotCancelableError`` for a task in another terminal state, or
        when the agent refuses. Reaches the run on whichever process runs it.
        """
        self.limits.check_request(params)
        return await self.cancels.cancel(params.id, params.metadata, call or CallContext())

    async def resubscribe(
        self, params: TaskIdParams, call: CallContext | None = None
    ) -> EventStream:
        """Stream a task's events: the current Task first, then live events until the
        stream ends where the call's version says (``VersionRules.subscription_ends``:
        v0.3 at the end of the run, v1.0 at a terminal state, following the task through
        the turns its next messages start). With ``call.last_event_id`` (the
        ``Last-Event-ID`` the client saw), replay every event after it instead, with no
        gap and no duplicate. A stream ends only at an event that ends it, read from the
        task's log; or after the Task, when the version ends it there or nothing more
        can come (a task no run of this process or any other will move on).

        Raises ``TaskNotFoundError``, and for a task in a terminal state the version's
        ``subscribe_to_terminal`` error when it names one (v1.0), unless the call resumes
        a stream with events still to replay.
        """
        self._require("resubscribe")
        self.limits.check_request(params)
        owner = _caller(call)
        rules = rules_for(_version(call))
        after = call.last_event_id if call is not None else None
        async with self.runs.hold(params.id, owner) as live:  # not found: raised now
            refused = rules.subscribe_to_terminal
            if refused is not None:
                if self.runs.owners is not None:  # another process may have moved it on
                    await self.runs.catch_up(live)
                assert live.task is not None
                state = live.task.status.state
                if is_terminal(state) and not self._replays(live, after):
                    raise refused(
                        f"Task {params.id} is {state.value}: a task in a terminal state "
                        "cannot be subscribed to; read it with GetTask"
                    )
        return self._follow(params.id, after, owner, rules)

    @staticmethod
    def _replays(live: LiveTask, after: int | None) -> bool:
        """Whether a stream resumed after event ``after`` has events to replay."""
        return after is not None and after < live.log.last_sequence

    async def _follow(
        self, task_id: str, after: int | None, owner: str | None, rules: VersionRules
    ) -> EventStream:
        ends = rules.subscription_ends
        async with self.runs.hold(task_id, owner) as live:
            with self.runs.following(task_id):  # the other processes note its events
                if self.runs.owners is not None:  # another process may have moved it on
                    await self.runs.catch_up(live)
                assert live.task is not None
                log, replayed = live.log, False
                position = None if after is None else min(after, log.last_sequence)
                if position is not None and position < log.last_sequence:
                    stored = await self.task_store.events(task_id, position)
                    if not stored or stored[0].sequence != position + 1:
                        position = None  # those events are gone: the Task stands in for them
                    for entry in stored if position is not None else ():
                        yield entry.sequence, entry.event
                        if ends(entry.event):
                            return
                        position, replayed = entry.sequence, True
                # Whether more will come is asked of the task's state as read, never of
                # whether some run holds its slot this instant: the recovery sweep takes
                # the slot for a moment to probe a task another process runs.
                follow = self._more_to_come(live, rules)
                if position is None or not (replayed or follow):
                    position = log.last_sequence
                    task = _trim(live.task, None)
                    yield position, task
                    if ends(task) and not follow:
                        return
                if follow:
                    async for item in log.read(position, ends):
                        yield item

    def _more_to_come(self, live: LiveTask, rules: VersionRules) -> bool:
        """Whether events that a subscription to ``live`` waits for can still come: a
        task not in a terminal state whose next events reach this log (a run here, or
        with a shared store, wherever it runs or a recovery sweep settles it); for a
        task waiting for input, only where the version follows pauses, or while the
        run that asked is still finishing."""
        assert live.task is not None
        state = live.task.status.state
        if is_terminal(state):
            return False
        if is_interrupted(state):
            return rules.follows_pauses or live.winding_down
        return live.turn is not None or self.runs.owners is not None

    # -- push notifications, extended card ---------------------------------------------

    async def set_push_config(
        self, params: TaskPushNotificationConfig, call: CallContext | None = None
    ) -> TaskPushNotificationConfig:
        """Add or replace one of the task's push configs (spec 7.5); its id is the
        task's when none is given. Raises ``TaskNotFoundError``, or ``InvalidParamsError``
        for a URL or authentication the agent will not deliver to."""
        push = self._require_push("set_push_config")
        self.limits.check_request(params)
        owner = _caller(call)
        async with self.runs.hold(params.task_id, owner) as live:
            await push.configs.check(params.push_notification_config)
            stored = await push.configs.save(
                live.task_id, params.push_notification_config, _version(call)
            )
            await self.runs.push_configs_changed(live.task_id)
            return stored

    async def get_push_config(
        self, params: GetTaskPushNotificationConfigParams, call: CallContext | None = None
    ) -> TaskPushNotificationConfig:
        """One push config of the task (spec 7.6): the one with the task's id when no
        config id is given. A config the task does not have answers the error the call's
        version names (``VersionRules.push_config_missing``)."""
        push = self._require_push("get_push_config")
        self.limits.check_request(params)
        await self._require_task(params.id, call)
        missing = rules_for(_version(call)).push_config_missing
        return await push.configs.get(params.id, params.push_notification_config_id, missing)

    async def list_push_configs(
        self, params: ListTaskPushNotificationConfigParams, call: CallContext | None = None
    ) -> list[TaskPushNotificationConfig]:
        """Every push config of the task (spec 7.7)."""
        push = self._require_push("list_push_configs")
        self.limits.check_request(params)
        await self._require_task(params.id, call)
        return await push.configs.list(params.id)

    async def delete_push_config(
        self, params: DeleteTaskPushNotificationConfigParams, call: CallContext | None = None
    ) -> None:
        """Remove one push config of the task (spec 7.8); no error if it has no such one."""
        push = self._require_push("delete_push_config")
        self.limits.check_request(params)
        await self._require_task(params.id, call)
        await push.configs.delete(params.id, params.push_notification_config_id)
        await self.runs.push_configs_changed(params.id)

    async def _require_task(self, task_id: str, call: CallContext | None) -> None:
        """Raise ``TaskNotFoundError`` unless the task exists and is the caller's."""
        owner = _caller(call)
        live = self.runs.peek(task_id)
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
        """The authenticated extended card, when one is configured. A card that declares
        none answers the error the call's version names
        (``VersionRules.extended_card_undeclared``)."""
        if Capability.extended_card not in self.capabilities:
            raise rules_for(_version(call)).extended_card_undeclared(
                "This agent's card declares no authenticated extended card"
            )
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
            await bus.start(listening(self.runs.follower))
        if owners is not None:
            runs, leases = self.runs, self.runs.leases
            owners.start(
                lost=leases.lost_leases, sweep=lambda: recover(runs), holding=leases.holding
            )
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


def _trace_store(telemetry: Telemetry, store: Store) -> None:
    """Let ``store`` record its group commits, and keep each task's latest turn for the
    other processes when they share it."""
    writer = getattr(store, "writer", None)  # a SQL store's group commit
    if writer is not None:
        writer.telemetry = telemetry
    if store.shared and hasattr(store, "save_trace"):
        telemetry.traces = store


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


_caller = scope_of
"""Who asks, as a task owner (principal and tenant; ``None``: the server itself, no
scoping)."""


def _version(call: CallContext | None) -> str:
    """The A2A version a push config is set in: the shape of its notifications (the
    only thing the version of a call changes here, and only as data, not behaviour)."""
    return call.protocol_version if call is not None else "0.3"


def _not_found(task_id: str) -> TaskNotFoundError:
    return TaskNotFoundError(f"Task {shorten(task_id)} was not found")


def _trim(task: Task, history_length: int | None) -> Task:
    """``task`` with at most ``history_length`` of its latest messages."""
    history = task.history
    if history_length is None or history is None or len(history) <= history_length:
        return task
    kept = history[len(history) - history_length :] if history_length else []
    return task.model_copy(update={"history": kept})
