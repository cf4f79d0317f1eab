"""``Client``: one typed method per A2A operation, written once over any ``Transport``.

Every method builds the operation's params model and goes through ``call`` (one answer)
or ``stream`` (events), which run the interceptors, enforce the per-call timeout and,
for streams, resume a broken stream through ``tasks/resubscribe`` with the last event id
seen, so that the caller gets every event once and in order.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from parley.client._errors import (
    AgentUnreachableError,
    ClientTimeoutError,
    StreamInterruptedError,
)
from parley.client._interceptors import ClientCall, ClientInterceptor
from parley.client._transport import ClientCallContext, StreamItem, Transport
from parley.protocol import (
    BY_NAME,
    LIST_TASKS,
    A2AError,
    Operation,
    UnsupportedOperationError,
    ends_interaction,
)
from parley.protocol._rules import rules_for
from parley.protocol._versions import V0_3
from parley.telemetry import context_injector, open_telemetry
from parley.types import (
    A2AModel,
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    Event,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    ListTasksParams,
    ListTasksResult,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskStatusUpdateEvent,
    TextPart,
)

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from parley.telemetry import TracedCall

_log = logging.getLogger("parley.client")
_RESUBSCRIBE = BY_NAME["resubscribe"]
_T = TypeVar("_T")


class Client:
    """An A2A client over one transport.

    ``card`` is the agent's card (interceptors read its security schemes);
    ``extensions`` are asked for on every call. A broken stream is resumed (see
    ``stream``): while the agent cannot be reached, for up to ``resume_window`` seconds
    after the break, the first attempt at once and the next ones ``resume_delay`` apart,
    doubling up to 5 s; a stream the agent itself keeps breaking, ``max_resumes`` times
    in a row.

    Every call carries the current trace context (W3C ``traceparent``, ``tracestate``,
    ``baggage``) when OpenTelemetry is installed; with ``tracer_provider`` (or a global
    one) each call is a ``CLIENT`` span of its own, and ``meter_provider`` (or a global
    one) measures them (docs/observability.md).
    Use it as an async context manager, or call ``aclose``.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        card: AgentCard | None = None,
        interceptors: Sequence[ClientInterceptor] = (),
        extensions: Iterable[str] = (),
        max_resumes: int = 3,
        resume_delay: float = 0.25,
        resume_window: float = 30.0,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self.transport = transport
        self.card = card
        self.interceptors = list(interceptors)
        self.extensions = frozenset(extensions)
        self.max_resumes = max_resumes
        self.resume_delay = resume_delay
        self.resume_window = resume_window
        self.telemetry = open_telemetry(tracer_provider, meter_provider)
        """Where the client's spans and metrics go (``None``: nowhere)."""
        self._inject = context_injector()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.transport.aclose()

    # -- the operations ------------------------------------------------------------------

    async def send_message(
        self,
        message: Message | str | Sequence[Part],
        *,
        context_id: str | None = None,
        task_id: str | None = None,
        blocking: bool = True,
        history_length: int | None = None,
        accepted_output_modes: list[str] | None = None,
        push_notification_config: PushNotificationConfig | None = None,
        metadata: dict[str, Any] | None = None,
        context: ClientCallContext | None = None,
    ) -> Task | Message:
        """``message/send`` (spec 7.1): the task (or the agent's direct reply).

        ``blocking`` waits until the task is terminal or interrupted, with no read time
        limit (``Timeouts.wait``). Raises ``A2AError`` subclasses.
        """
        params = send_params(
            message, context_id, task_id, metadata,
            MessageSendConfiguration(
                blocking=blocking,
                history_length=history_length,
                accepted_output_modes=accepted_output_modes,
                push_notification_config=push_notification_config,
            ),
        )  # fmt: skip
        result: Task | Message = await self.call(BY_NAME["send_message"], params, context)
        return result

    async def stream_message(
        self,
        message: Message | str | Sequence[Part],
        *,
        context_id: str | None = None,
        task_id: str | None = None,
        accepted_output_modes: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        context: ClientCallContext | None = None,
        push_notification_config: PushNotificationConfig | None = None,
    ) -> AsyncGenerator[Event, None]:
        """``message/stream`` (spec 7.2): the events of the run, until it ends.

        A broken stream is resumed (see ``stream``). Raises ``A2AError`` subclasses.
        """
        configuration = MessageSendConfiguration(
            accepted_output_modes=accepted_output_modes,
            push_notification_config=push_notification_config,
        )
        params = send_params(message, context_id, task_id, metadata, configuration)
        async with _closing(self.stream(BY_NAME["stream_message"], params, context)) as items:
            async for item in items:
                yield item.event

    async def get_task(
        self,
        task_id: str,
        *,
        history_length: int | None = None,
        context: ClientCallContext | None = None,
    ) -> Task:
        """``tasks/get`` (spec 7.3); raises ``TaskNotFoundError`` for an unknown task."""
        params = TaskQueryParams(id=task_id, history_length=history_length)
        task: Task = await self.call(BY_NAME["get_task"], params, context)
        return task

    async def list_tasks(
        self,
        params: ListTasksParams | None = None,
        *,
        context: ClientCallContext | None = None,
        **filters: Any,
    ) -> ListTasksResult:
        """``ListTasks`` (v1.0.1 §3.1.4): one page of the agent's tasks, most recently
        updated first; ``filters`` are the fields of ``ListTasksParams`` (``context_id``,
        ``status``, ``page_size``, ``page_token``, ``history_length``,
        ``include_artifacts``, ``status_timestamp_after``). Raises
        ``UnsupportedOperationError`` when the agent is spoken to in A2A 0.3, which has
        no such call on JSON-RPC or gRPC."""
        interface = getattr(self.transport, "interface", None)
        if getattr(interface, "protocol", "1.0") != "1.0":
            raise UnsupportedOperationError(
                "Listing tasks is an A2A 1.0 operation; this agent is spoken to in "
                f"{interface.protocol}"  # type: ignore[union-attr]
            )
        query = params if params is not None else ListTasksParams(**filters)
        result: ListTasksResult = await self.call(LIST_TASKS, query, context)
        return result

    async def cancel_task(self, task_id: str, *, context: ClientCallContext | None = None) -> Task:
        """``tasks/cancel`` (spec 7.4); raises ``TaskNotCancelableError`` once it is over."""
        task: Task = await self.call(BY_NAME["cancel_task"], TaskIdParams(id=task_id), context)
        return task

    async def resubscribe(
        self,
        task_id: str,
        *,
        last_event_id: int | None = None,
        context: ClientCallContext | None = None,
    ) -> AsyncGenerator[Event, None]:
        """``tasks/resubscribe`` (spec 7.9): the task's events from now (or after
        ``last_event_id``) until its run ends."""
        context = dataclasses.replace(context or ClientCallContext(), last_event_id=last_event_id)
        async with _closing(self.stream(_RESUBSCRIBE, TaskIdParams(id=task_id), context)) as items:
            async for item in items:
                yield item.event

    async def set_push_config(
        self, config: TaskPushNotificationConfig, *, context: ClientCallContext | None = None
    ) -> TaskPushNotificationConfig:
        """``tasks/pushNotificationConfig/set`` (spec 7.5)."""
        result: TaskPushNotificationConfig = await self.call(
            BY_NAME["set_push_config"], config, context
        )
        return result

    async def get_push_config(
        self,
        task_id: str,
        config_id: str | None = None,
        *,
        context: ClientCallContext | None = None,
    ) -> TaskPushNotificationConfig:
        """``tasks/pushNotificationConfig/get`` (spec 7.6)."""
        params = GetTaskPushNotificationConfigParams(
            id=task_id, push_notification_config_id=config_id
        )
        result: TaskPushNotificationConfig = await self.call(
            BY_NAME["get_push_config"], params, context
        )
        return result

    async def list_push_configs(
        self, task_id: str, *, context: ClientCallContext | None = None
    ) -> list[TaskPushNotificationConfig]:
        """``tasks/pushNotificationConfig/list`` (spec 7.7)."""
        params = ListTaskPushNotificationConfigParams(id=task_id)
        result: list[TaskPushNotificationConfig] = await self.call(
            BY_NAME["list_push_configs"], params, context
        )
        return result

    async def delete_push_config(
        self, task_id: str, config_id: str, *, context: ClientCallContext | None = None
    ) -> None:
        """``tasks/pushNotificationConfig/delete`` (spec 7.8)."""
        params = DeleteTaskPushNotificationConfigParams(
            id=task_id, push_notification_config_id=config_id
        )
        await self.call(BY_NAME["delete_push_config"], params, context)

    async def get_extended_card(self, *, context: ClientCallContext | None = None) -> AgentCard:
        """``agent/getAuthenticatedExtendedCard`` (spec 7.10); the client adopts the card.

        Raises ``AuthenticatedExtendedCardNotConfiguredError`` when the agent has none.
        """
        card: AgentCard = await self.call(BY_NAME["get_extended_card"], None, context)
        self.card = card
        return card

    # -- the two ways a call travels -------------------------------------------------------

    async def call(
        self,
        operation: Operation,
        params: A2AModel | None,
        context: ClientCallContext | None = None,
    ) -> Any:
        """Run any non-streaming operation of the table through the interceptors."""
        if self.telemetry is None:
            return await self._call(operation, params, context, None)
        traced = self.telemetry.client_call(operation.name, params)
        try:
            result = await self._call(operation, params, context, traced)
            traced.answered(result)
            return result
        except BaseException as error:
            traced.failed(error)
            raise
        finally:
            traced.end()

    async def _call(
        self,
        operation: Operation,
        params: A2AModel | None,
        context: ClientCallContext | None,
        traced: TracedCall | None,
    ) -> Any:
        call = await self._prepare(operation, params, context, traced)
        try:
            with _deadline(call.context.timeout):
                result = await self.transport.request(operation, call.params, call.context)
        except A2AError as error:
            await self._failed(call, error)
            raise
        for interceptor in self.interceptors:
            await interceptor.after(call, result)
        return result

    def stream(
        self,
        operation: Operation,
        params: A2AModel | None,
        context: ClientCallContext | None = None,
    ) -> AsyncGenerator[StreamItem, None]:
        """Run any streaming operation; resume it through ``tasks/resubscribe`` when it breaks.

        Events whose sequence number was already delivered are skipped, so the caller
        sees each once, in order. While the agent cannot be reached (a server restarting)
        resumption backs off; once ``resume_window`` has passed since the stream broke
        with no new event (or after ``max_resumes`` streams in a row that the agent broke
        again), ``StreamInterruptedError`` is raised, carrying ``last_event_id``.
        """
        if self.telemetry is None:
            return self._stream(operation, params, context, None)
        traced = self.telemetry.client_call(operation.name, params)
        return _traced_stream(self._stream(operation, params, context, traced), traced)

    async def _stream(
        self,
        operation: Operation,
        params: A2AModel | None,
        context: ClientCallContext | None,
        traced: TracedCall | None,
    ) -> AsyncGenerator[StreamItem, None]:
        call = await self._prepare(operation, params, context, traced)
        resume = _Resume(call, operation, self, _stream_ends(operation, self.transport))
        deadline = _Deadline(call.context.timeout)
        while True:
            try:
                async with _closing(
                    self.transport.stream(resume.operation, resume.params, resume.context)
                ) as items:
                    while (item := await deadline.next(items)) is not None:
                        if resume.is_new(item):
                            for interceptor in self.interceptors:
                                await interceptor.after(call, item.event)
                            yield item
                        if resume.ended:
                            return
                if resume.seen_nothing_new_yet():
                    return
                raise StreamInterruptedError(
                    "The stream closed before the run's last event",
                    last_event_id=resume.last_event_id,
                )
            except A2AError as error:
                problem = resume.failed(error)
                if problem is not None:
                    await self._failed(call, problem)
                    raise problem from problem.__cause__
                resume.log(error)
            await anyio.sleep(resume.delay())

    async def _prepare(
        self,
        operation: Operation,
        params: A2AModel | None,
        context: ClientCallContext | None,
        traced: TracedCall | None = None,
    ) -> ClientCall:
        context = dataclasses.replace(context) if context else ClientCallContext()
        context.headers = dict(context.headers)
        if traced is not None:
            traced.inject(context.headers)
        elif self._inject is not None:
            self._inject(context.headers)
        context.query = dict(context.query)
        context.extensions = context.extensions | self.extensions
        call = ClientCall(operation, params, context, self.card)
        for interceptor in self.interceptors:
            await interceptor.before(call)
        return call

    async def _failed(self, call: ClientCall, error: A2AError) -> None:
        for interceptor in self.interceptors:
            await interceptor.failed(call, error)


def _ends_run(event: Event) -> bool:
    """Whether ``event`` is the last of an agent run (its ``final`` flag, as a peer may
    set it, counts)."""
    return ends_interaction(event) or (isinstance(event, TaskStatusUpdateEvent) and event.final)


def _stream_ends(operation: Operation, transport: Transport) -> Callable[[Event], bool]:
    """Where a stream of ``operation`` ends: a run's end, and for a subscription what the
    version the transport speaks says (``VersionRules.subscription_ends``: v1.0 follows
    the task through its pauses to a terminal state)."""
    if operation is _RESUBSCRIBE:
        version = str(getattr(transport, "protocol", V0_3))  # a transport of one's own: v0.3
        ends = rules_for(version).subscription_ends
        if ends is not ends_interaction:
            return ends
    return _ends_run


async def _traced_stream(
    items: AsyncGenerator[StreamItem, None], traced: TracedCall
) -> AsyncGenerator[StreamItem, None]:
    """``items``, in the span of their call: ended when the stream ends, fails or is
    closed."""
    try:
        async for item in items:
            traced.answered(item.event)
            yield item
    except GeneratorExit:  # the reader stopped reading: not a failure of the call
        raise
    except BaseException as error:
        traced.failed(error)
        raise
    finally:
        await items.aclose()
        traced.end()


class _Resume:
    """Where a stream stands: the last event id delivered, the task, and the attempts to
    resume it since it broke (reset by every new event)."""

    def __init__(
        self,
        call: ClientCall,
        operation: Operation,
        client: Client,
        ends: Callable[[Event], bool],
    ) -> None:
        self.operation = operation
        self.ends = ends
        """Whether an event is the stream's last (``_stream_ends``)."""
        self.params = call.params
        self.context = call.context
        self.max_resumes = client.max_resumes
        self.first_delay = client.resume_delay
        self.window = client.resume_window
        self.failures = 0
        self.broken = 0
        self.broken_at: float | None = None
        self.resuming = False
        self.ended = False
        self.last_event_id = call.context.last_event_id
        self.task_id = self.params.id if isinstance(self.params, TaskIdParams) else None
        self._delivered = 0

    def is_new(self, item: StreamItem) -> bool:
        if item.id is not None and self.last_event_id is not None and item.id <= self.last_event_id:
            return False
        if item.id is not None:
            self.last_event_id = item.id
        self.task_id = self.task_id or _task_id(item.event)
        self.ended = self.ends(item.event)
        self.failures = 0
        self.broken = 0
        self.broken_at = None
        self._delivered += 1
        return True

    def seen_nothing_new_yet(self) -> bool:
        # A stream that closed without events has nothing to resume (an empty answer).
        return self._delivered == 0 and not self.resuming

    def failed(self, error: A2AError) -> A2AError | None:
        """``None`` to try again (resuming), or the error to raise. A stream the agent
        broke is retried ``max_resumes`` times in a row; an agent unreachable while
        resuming (restarting) until the window is over, then ``StreamInterruptedError``;
        any other error is the agent's answer."""
        if isinstance(error, StreamInterruptedError):
            self.broken += 1
            return None if self.broken <= self.max_resumes and self.can_retry() else error
        if not (isinstance(error, AgentUnreachableError) and self.resuming):
            return error
        if self.can_retry():
            return None
        interrupted = self.gave_up(error)
        interrupted.__cause__ = error
        return interrupted

    def can_retry(self) -> bool:
        """Whether to try again, and if so, switch to ``tasks/resubscribe``."""
        now = anyio.current_time()
        if self.broken_at is None:
            self.broken_at = now
        if self.task_id is None or now - self.broken_at >= self.window:
            return False
        self.failures += 1
        self.resuming = True
        self.operation = _RESUBSCRIBE
        self.params = TaskIdParams(id=self.task_id)
        self.context = dataclasses.replace(self.context, last_event_id=self.last_event_id)
        return True

    def log(self, error: A2AError) -> None:
        """Say on the ``parley.client`` logger (INFO) that the stream broke and is being
        resumed: the record carries ``task_id``, ``attempt`` and ``window`` (seconds
        resumption goes on for), for a program that shows it (``parley`` does)."""
        details = {"task_id": self.task_id, "attempt": self.failures, "window": self.window}
        _log.info(
            "The stream of task %s broke (%s): resuming it, attempt %d",
            self.task_id,
            error.message,
            self.failures,
            extra=details,
        )

    def delay(self) -> float:
        """The pause before the next attempt: none for the first, then ``resume_delay``
        doubling up to 5 s, never past the end of the window."""
        if self.failures <= 1:
            return 0.0
        backoff: float = min(self.first_delay * 2.0 ** (self.failures - 2), _MAX_RESUME_DELAY)
        assert self.broken_at is not None
        return max(min(backoff, self.broken_at + self.window - anyio.current_time()), 0.0)

    def gave_up(self, error: A2AError) -> StreamInterruptedError:
        assert self.broken_at is not None
        waited = anyio.current_time() - self.broken_at
        return StreamInterruptedError(
            f"The stream broke and could not be resumed in {waited:.1f} s "
            f"({self.failures} attempts): {error.message}",
            last_event_id=self.last_event_id,
        )


_MAX_RESUME_DELAY = 5.0


class _Deadline:
    """The per-call ``timeout`` of a stream, checked around each wait for an event."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.end = None if timeout is None else anyio.current_time() + timeout

    async def next(self, items: AsyncIterator[StreamItem]) -> StreamItem | None:
        remaining = None if self.end is None else max(self.end - anyio.current_time(), 0)
        with _deadline(remaining, self.timeout):
            return await anext(items, None)


@contextlib.contextmanager
def _deadline(seconds: float | None, overall: float | None = None) -> Any:
    if seconds is None:
        yield
        return
    try:
        with anyio.fail_after(seconds):
            yield
    except TimeoutError:
        raise ClientTimeoutError(
            f"The call did not finish within its timeout of {overall or seconds:g} s"
        ) from None


def _task_id(event: Event) -> str | None:
    if isinstance(event, Task):
        return event.id
    if isinstance(event, Message):
        return event.task_id
    return event.task_id


def send_params(
    message: Message | str | Sequence[Part],
    context_id: str | None,
    task_id: str | None,
    metadata: dict[str, Any] | None,
    configuration: MessageSendConfiguration | None,
) -> MessageSendParams:
    """The params of ``message/send`` and ``message/stream``."""
    return MessageSendParams(
        message=user_message(message, context_id=context_id, task_id=task_id),
        configuration=configuration,
        metadata=metadata,
    )


def user_message(
    content: Message | str | Sequence[Part],
    *,
    context_id: str | None = None,
    task_id: str | None = None,
) -> Message:
    """A user ``Message`` from text or parts (a ``Message`` is completed, not replaced)."""
    if isinstance(content, Message):
        updates = {
            name: value
            for name, value in (("context_id", context_id), ("task_id", task_id))
            if value is not None and getattr(content, name) is None
        }
        return content.model_copy(update=updates) if updates else content
    parts: list[Part] = [TextPart(text=content)] if isinstance(content, str) else list(content)
    return Message(
        role=Role.user,
        parts=parts,
        message_id=str(uuid.uuid4()),
        context_id=context_id,
        task_id=task_id,
    )


@contextlib.asynccontextmanager
async def _closing(items: AsyncIterator[_T]) -> AsyncIterator[AsyncIterator[_T]]:
    # Close a stream we stop reading early, so its HTTP response is released now.
    try:
        yield items
    finally:
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            await aclose()
