"""Idempotent send: a repeated ``message/send`` gets the first one's result, no new run.

A message is a repeat when its ``messageId`` was already sent in the same *scope*: the
task it names (``taskId``) or else the context it names (``contextId``). A message with
neither starts a new context, so nothing can repeat it. The store records each scope
and message id with the task it went to (and the agent's direct reply, if it answered
with a Message), atomically, so two copies sent at once still make one run.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass

from parley.protocol import InvalidParamsError, ends_interaction
from parley.server.tasks._live import LiveTask
from parley.server.tasks._runs import TaskRuns
from parley.stores import SentMessage
from parley.types import Event, Message, Task

_STARTING = 5.0
"""Seconds a repeat looks for a task another process is starting: it claimed the
message, and stores the task with its agent's first event."""


def _scope(message: Message) -> str | None:
    return message.task_id or message.context_id


@dataclass(slots=True)
class Repeat:
    """A message that was sent before, and what to answer it with.

    A task run here is answered from its live copy. One that another process may run
    (a shared store, no run here) is answered as stored, since no note updates the copy
    here unless a reader here follows it; and while it is active, a blocking or
    streaming repeat follows it as a resubscriber does, to the end of its run."""

    runs: TaskRuns
    message: Message
    sent: SentMessage

    async def result(self, blocking: bool) -> Task | Message:
        """The first send's result: its reply, or its task (once the run that is still
        going ends, when ``blocking``)."""
        if self.sent.reply is not None:
            return self.sent.reply
        fresh = not self.runs.is_live(self.sent.task_id)  # then read from the store
        async with self._held() as live:
            if live is None:
                assert self.sent.reply is not None
                return self.sent.reply
            if self.runs.maybe_elsewhere(live):
                return await self._stored(live, blocking, fresh)
            if live.task is None or (blocking and _running(live)):
                event = await _next_end(live, blocking)
                if live.task is None and isinstance(event, Message):
                    return event
            if live.task is None:
                raise self._gone()
            return live.task

    async def _stored(self, live: LiveTask, blocking: bool, fresh: bool) -> Task:
        """``live`` as stored; when ``blocking``, once the run still going elsewhere
        has ended (followed meanwhile: its process notes its events here)."""
        if await self.runs.elsewhere(live, fresh) and blocking:
            with self.runs.following(live.task_id):
                if await self.runs.elsewhere(live):  # what was stored before the follow
                    await _next_end(live, True)
        assert live.task is not None
        return live.task

    async def stream(self) -> AsyncGenerator[tuple[int, Event], None]:
        """The first send's stream as it stands: its reply, or the task, then the live
        events of the run still going until it ends."""
        if self.sent.reply is not None:
            yield 1, self.sent.reply
            return
        fresh = not self.runs.is_live(self.sent.task_id)
        async with self._held() as live:
            if live is None:
                assert self.sent.reply is not None
                yield 1, self.sent.reply
                return
            if self.runs.maybe_elsewhere(live):
                # held while followed: the notes heard reach the copy registered here;
                # closed with this stream (a reader gone): unfollowed now, not once the
                # garbage collector finds it
                async with aclosing(self._stored_stream(live, fresh)) as items:
                    async for item in items:
                        yield item
                return
        # let go: the log is read directly, no need to keep it registered
        after = 0
        if live.task is not None:
            # whether its run goes on, asked of the task as yielded: asked after the
            # reader took it, a run that ended meanwhile left its last events unread
            after, running = live.log.last_sequence, _running(live)
            yield after, live.task
            if not running:
                return
        async for item in live.log.read(after, ends_interaction):
            yield item

    async def _stored_stream(
        self, live: LiveTask, fresh: bool
    ) -> AsyncGenerator[tuple[int, Event], None]:
        """``live`` as stored, then, while its run goes on elsewhere, its events as a
        resubscriber gets them."""
        assert live.task is not None
        if not await self.runs.elsewhere(live, fresh):
            yield live.log.last_sequence, live.task
            return
        with self.runs.following(live.task_id):
            active = await self.runs.elsewhere(live)  # what was stored before the follow
            after = live.log.last_sequence
            yield after, live.task
            if active:
                async for item in live.log.read(after, ends_interaction):
                    yield item

    @asynccontextmanager
    async def _held(self) -> AsyncIterator[LiveTask | None]:
        """The first send's live task, held for the block; ``None`` when it turned out
        to have had a direct reply (now in ``sent``). With a shared store, a task not
        stored may be one another process is starting: looked for again, ever less
        often, for up to ``_STARTING`` s, with its reply (its agent may answer with a
        Message)."""
        wait = 0.01
        while True:
            async with self.runs.hold_if_any(self.sent.task_id) as live:
                if live is not None:
                    yield live
                    return
            scope = _scope(self.message)
            if self.runs.owners is None or wait > _STARTING or scope is None:
                raise self._gone()
            await asyncio.sleep(wait)
            wait *= 2
            sent = await self.runs.store.find_message(scope, self.message.message_id)
            if sent is None:
                raise self._gone()
            if sent.reply is not None:
                self.sent = sent
                yield None
                return

    def _gone(self) -> InvalidParamsError:
        return InvalidParamsError(
            f"Message {self.message.message_id} was already sent and handled, and its "
            "result is no longer kept; send it with a new messageId to start again"
        )


def _running(live: LiveTask) -> bool:
    return live.turn is not None


async def _next_end(live: LiveTask, blocking: bool) -> Event | None:
    after = 0 if live.task is None else live.log.last_sequence
    return await live.log.first(after, ends_interaction if blocking else None)


class SentMessages:
    """Finds and records sent messages for the request handler."""

    def __init__(self, runs: TaskRuns) -> None:
        self.runs = runs

    async def earlier(self, message: Message) -> Repeat | None:
        """The earlier send of ``message`` (as the client sent it), if any."""
        scope = _scope(message)
        if scope is None:
            return None
        sent = await self.runs.store.find_message(scope, message.message_id)
        return None if sent is None else Repeat(self.runs, message, sent)

    async def claim(self, message: Message, task_id: str) -> Repeat | None:
        """Record that ``message`` goes to ``task_id``; a ``Repeat`` if another send of
        it got there first."""
        scope = _scope(message)
        if scope is None:
            return None
        sent = await self.runs.store.claim_message(scope, message.message_id, task_id)
        return None if sent is None else Repeat(self.runs, message, sent)

    async def forget(self, message: Message) -> None:
        """Forget the claim of a message that was refused, so it may be sent again."""
        scope = _scope(message)
        if scope is not None:
            await self.runs.store.release_message(scope, message.message_id)
