"""The memory store's push configs, delivery outbox and leases.

These hold little (a few configs per task, deliveries not yet made, one lease per task
in flight), so plain objects do; the memory store keeps all of a task's data in one
process, so its leases matter only to the contract they share with the SQL stores.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable

from parley.stores._protocols import Lease, OutboxEntry
from parley.types import PushNotificationConfig


class MemorySide:
    """Push configs, outbox and leases, for ``MemoryStore`` to inherit."""

    def __init__(self) -> None:
        self._push: dict[str, dict[str, tuple[PushNotificationConfig, str]]] = {}
        """Task id -> config id -> (config, the A2A version it was set in)."""
        self._outbox: dict[int, OutboxEntry] = {}
        self._outbox_ids = itertools.count(1)
        self._claims: dict[int, float] = {}
        """Outbox entry id -> when its claim expires."""
        self._leases: dict[str, Lease] = {}
        self._tokens: dict[str, int] = {}

    def _forget_task(self, task_id: str) -> None:
        """Drop everything of ``task_id`` kept here."""
        self._push.pop(task_id, None)
        self._leases.pop(task_id, None)
        self._tokens.pop(task_id, None)
        for entry_id in [i for i, e in self._outbox.items() if e.task_id == task_id]:
            del self._outbox[entry_id]
            self._claims.pop(entry_id, None)

    # -- push configs ----------------------------------------------------------------

    async def set_push_config(
        self, task_id: str, config: PushNotificationConfig, version: str = "0.3"
    ) -> None:
        configs = self._push.setdefault(task_id, {})
        configs[config.id or task_id] = (config.model_copy(), version)

    async def get_push_config(self, task_id: str, config_id: str) -> PushNotificationConfig | None:
        found = self._push.get(task_id, {}).get(config_id)
        return None if found is None else found[0].model_copy()

    async def list_push_configs(self, task_id: str) -> list[PushNotificationConfig]:
        return [config.model_copy() for config, _ in self._push.get(task_id, {}).values()]

    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        return self._push.get(task_id, {}).pop(config_id, None) is not None

    async def push_config_versions(self, task_id: str) -> dict[str, str]:
        configs = self._push.get(task_id, {})
        return {config_id: version for config_id, (_, version) in configs.items()}

    # -- outbox ----------------------------------------------------------------------

    def _enqueue(self, entries: Iterable[OutboxEntry]) -> None:
        for entry in entries:
            entry_id = next(self._outbox_ids)
            self._outbox[entry_id] = OutboxEntry(
                entry.task_id,
                entry.config_id,
                entry.sequence,
                entry.payload,
                entry_id,
                entry.attempts,
                entry.due,
                entry.created or time.time(),
                entry.traceparent,
            )

    async def outbox_due(self, now: float, limit: int = 100) -> list[OutboxEntry]:
        due = [entry for entry in self._outbox.values() if entry.due <= now]
        due.sort(key=lambda entry: entry.id)
        return due[:limit]

    async def outbox_claim(
        self, holder: str, now: float, lease: float, limit: int
    ) -> list[OutboxEntry]:
        heads: dict[tuple[str, str], OutboxEntry] = {}
        for entry in self._outbox.values():  # in id order: entries keep their place
            heads.setdefault((entry.task_id, entry.config_id), entry)
        claimed: list[OutboxEntry] = []
        for entry in heads.values():
            if len(claimed) == limit:
                break
            if entry.due <= now and self._claims.get(entry.id, 0.0) <= now:
                self._claims[entry.id] = now + lease
                claimed.append(entry)
        return claimed

    async def outbox_done(self, entry_id: int) -> None:
        self._outbox.pop(entry_id, None)
        self._claims.pop(entry_id, None)

    async def outbox_retry(self, entry_id: int, due: float) -> None:
        entry = self._outbox.get(entry_id)
        if entry is not None:
            self._outbox[entry_id] = OutboxEntry(
                entry.task_id,
                entry.config_id,
                entry.sequence,
                entry.payload,
                entry_id,
                entry.attempts + 1,
                due,
                entry.created,
            )
            self._claims.pop(entry_id, None)

    # -- leases ----------------------------------------------------------------------

    def _holds(self, lease: Lease) -> bool:
        current = self._leases.get(lease.task_id)
        return current is not None and current.token == lease.token

    async def acquire_lease(self, task_id: str, holder: str, ttl: float) -> Lease | None:
        now = time.time()
        current = self._leases.get(task_id)
        if current is not None and current.holder != holder and current.expires > now:
            return None
        if current is not None and current.holder == holder and current.expires > now:
            token = current.token
        else:
            token = self._tokens.get(task_id, 0) + 1
            self._tokens[task_id] = token
        lease = self._leases[task_id] = Lease(task_id, holder, token, now + ttl)
        return lease

    async def renew_leases(self, holder: str, ttl: float) -> set[str]:
        now = time.time()
        held = set()
        for task_id, lease in self._leases.items():
            if lease.holder == holder and lease.expires > now:
                self._leases[task_id] = Lease(task_id, holder, lease.token, now + ttl)
                held.add(task_id)
        return held

    async def release_lease(self, lease: Lease) -> None:
        self._release(lease)

    def _release(self, lease: Lease) -> None:
        if self._holds(lease):
            del self._leases[lease.task_id]

    async def get_lease(self, task_id: str) -> Lease | None:
        return self._leases.get(task_id)
