"""The delivery worker: empties the push outbox, with retries, across restarts and processes.

Theory of operation. Every event of a task that has push configs writes one outbox entry
per config in the same transaction as the event (see the engine's ``Publisher``), so a
notification is never lost between the two. The outbox is the queue: the worker claims
the entries that are due, each for a lease (``OutboxStore.outbox_claim``), posts them,
and then removes them (delivered, or dead) or sets when to try again. The claim hands out
only the *head* of each lane (one task's entries for one config, in event order), so
notifications of a task reach a webhook in order, and a lane waiting for a slow webhook
holds up nothing else. A process that dies holding a lease simply lets it expire; whoever
claims next (this process after a restart, or another one on the same database) delivers
the entry. Delivery is at least once: a process killed after the webhook answered but
before the entry was removed delivers it again.

Why not tenacity or stamina: both retry a call inside one running coroutine, sleeping
between attempts. Here the schedule must outlive the process, so each entry's next
attempt is a time stored in the outbox row, and the whole policy is ``PushRetry.delay``:
exponential growth with equal jitter, capped, within a deadline.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import httpx

from parley.server.agent._ids import new_id
from parley.server.auth._keys import SigningKeys
from parley.server.push._delivery import Outcome, post
from parley.server.push._guard import GuardedTransport, WebhookGuard
from parley.stores import OutboxEntry, OutboxStore, PushConfigStore
from parley.types import PushNotificationConfig

if TYPE_CHECKING:
    from parley.telemetry import Telemetry

logger = logging.getLogger("parley.push")


@dataclass(frozen=True, slots=True)
class PushRetry:
    """When to try a notification again, and when to give up.

    After attempt *n* fails the next one waits between half and all of
    ``min(longest, first * factor ** (n - 1))`` seconds (or what the webhook's
    ``Retry-After`` asks); a notification not delivered ``deadline`` seconds after its
    event is dead: removed from the outbox and logged (logger ``parley.push``). One
    attempt may take ``timeout`` seconds in all.
    """

    first: float = 1.0
    factor: float = 2.0
    longest: float = 600.0
    deadline: float = 24 * 3600.0
    timeout: float = 10.0

    def delay(self, attempts: int) -> float:
        """Seconds to wait after ``attempts`` failed attempts."""
        ceiling = min(self.longest, self.first * self.factor ** max(0, attempts - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)  # jitter, not a secret


class PushOutbox(OutboxStore, PushConfigStore, Protocol):
    """What the worker needs of the store."""


class PushWorker:
    """Delivers the outbox of ``store`` in the background (``start``, ``aclose``).

    ``concurrency`` bounds the deliveries in flight in this process; ``poll`` is how
    often it looks for entries that fell due or were written by other processes.
    """

    def __init__(
        self,
        store: PushOutbox,
        keys: SigningKeys,
        *,
        guard: WebhookGuard,
        retry: PushRetry,
        issuer: str | None = None,
        concurrency: int = 64,
        poll: float = 1.0,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.store = store
        self.telemetry = telemetry
        self.keys = keys
        self.retry = retry
        self.issuer = issuer
        self.concurrency = concurrency
        self.poll = poll
        self.holder = new_id()
        self.lease = retry.timeout + 5.0
        self.guard = guard
        self.client: httpx.AsyncClient | None = None
        self._wake = asyncio.Event()
        self._inflight: set[asyncio.Task[None]] = set()
        self._loop: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """Look at the outbox now (new entries were written)."""
        self._wake.set()

    def start(self) -> None:
        if self._loop is not None:
            return
        self.client = httpx.AsyncClient(
            transport=GuardedTransport(self.guard),
            timeout=self.retry.timeout,
            # not followed: a redirect to another host would carry the token there too
            follow_redirects=False,
        )
        self._loop = asyncio.create_task(self._run(), name="parley-push-worker")

    async def aclose(self) -> None:
        """Stop claiming and cancel deliveries in flight (their leases expire; another
        claim delivers them)."""
        tasks = [*self._inflight, *([self._loop] if self._loop else [])]
        self._loop = None
        for task in tasks:
            task.cancel()
        try:
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:  # cancelled while waiting too: the client's connections are closed
            client, self.client = self.client, None
            if client is not None:
                await client.aclose()

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self._claim()
            except Exception:
                logger.exception("could not read the push outbox; trying again")
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a
            # cancellation that comes as the wake-up does (a delivery cancelled by
            # aclose sets it), and this loop would never stop
            with suppress(TimeoutError):
                async with asyncio.timeout(self.poll):
                    await self._wake.wait()

    async def _claim(self) -> None:
        free = self.concurrency - len(self._inflight)
        if free <= 0:
            return
        entries = await self.store.outbox_claim(self.holder, time.time(), self.lease, free)
        for entry in entries:
            delivery = asyncio.create_task(self._deliver(entry), name="parley-push-delivery")
            self._inflight.add(delivery)
            delivery.add_done_callback(self._delivered)

    def _delivered(self, delivery: asyncio.Task[None]) -> None:
        self._inflight.discard(delivery)
        self._wake.set()  # the lane's next entry may be due now, and a slot is free

    async def _deliver(self, entry: OutboxEntry) -> None:
        try:
            config = await self.store.get_push_config(entry.task_id, entry.config_id)
            if config is None:  # the config was deleted: nobody wants this any more
                await self.store.outbox_done(entry.id)
                return
            body = entry.payload.encode()
            telemetry = self.telemetry
            if telemetry is None:
                await self._settle(entry, config.url, await self._attempt(entry, config, body))
                return
            with telemetry.push_attempt(entry, config.url) as attempt:
                outcome = await self._attempt(entry, config, body, attempt.headers)
                settled = await self._settle(entry, config.url, outcome)
                attempt.ended(outcome.delivered, settled, outcome.status)
        except Exception:
            logger.exception("push delivery %s of task %s failed", entry.id, entry.task_id)

    async def _attempt(
        self,
        entry: OutboxEntry,
        config: PushNotificationConfig,
        body: bytes,
        trace: Mapping[str, str] | None = None,
    ) -> Outcome:
        assert self.client is not None  # deliveries run between start and aclose
        try:
            async with asyncio.timeout(self.retry.timeout):
                return await post(
                    self.client, config, entry.task_id, body, self.keys, self.issuer, trace
                )
        except TimeoutError:
            return Outcome(False, True, f"no answer within {self.retry.timeout} s")

    async def _settle(self, entry: OutboxEntry, url: str, outcome: Outcome) -> bool:
        """Remove the entry, or put it off for another attempt (then ``False``)."""
        attempts = entry.attempts + 1
        if outcome.delivered:
            await self.store.outbox_done(entry.id)
            logger.debug("task %s event %s delivered to %s", entry.task_id, entry.sequence, url)
            return True
        if outcome.retry:
            wait = outcome.retry_after
            # Retry-After is honoured, but never as "at once": a webhook answering
            # "503, Retry-After: 0" on every attempt is not hammered
            due = time.time() + (
                self.retry.delay(attempts) if wait is None else max(wait, self.retry.first)
            )
            if due <= entry.created + self.retry.deadline:
                await self.store.outbox_retry(entry.id, due)
                logger.info(
                    "task %s event %s to %s: %s; attempt %d again in %.1f s",
                    entry.task_id, entry.sequence, url, outcome.reason, attempts + 1,
                    due - time.time(),
                )  # fmt: skip
                return False
        await self.store.outbox_done(entry.id)
        logger.warning(
            "push notification of task %s event %s to %s is dead after %d attempt(s): %s",
            entry.task_id, entry.sequence, url, attempts, outcome.reason,
        )  # fmt: skip
        return True
