"""The push config operations (spec 7.5-7.8) and the settings of push delivery.

``PushSettings`` is what an app is given to serve push (``create_app(push=...)``); the
request handler serves ``tasks/pushNotificationConfig/*`` and
``configuration.pushNotificationConfig`` through ``PushConfigs``, which checks each config
when it is set: its URL against the SSRF guard, its authentication against what parley can
send. Both refusals are ``-32602`` with a message saying what to change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from parley.protocol import A2AError, InvalidParamsError
from parley.protocol._errors import shorten
from parley.server.push._delivery import scheme_for
from parley.server.push._guard import WebhookGuard, WebhookRefused
from parley.server.push._worker import PushRetry
from parley.stores import PushConfigStore
from parley.types import PushNotificationConfig, TaskPushNotificationConfig


@dataclass(frozen=True)
class PushSettings:
    """How an app delivers push notifications.

    ``allow``: CIDR ranges webhooks may be in although not public (plain ``http``
    allowed there), as ``parley serve --allow-push-to``. ``retry``: backoff, deadline and
    per-attempt timeout. ``concurrency``: deliveries in flight per process.
    """

    allow: Iterable[str] = ()
    retry: PushRetry = field(default_factory=PushRetry)
    concurrency: int = 64
    guard: WebhookGuard | None = None
    """A guard of your own (a custom resolver); ``allow`` is then not used."""

    def make_guard(self) -> WebhookGuard:
        return self.guard if self.guard is not None else WebhookGuard(self.allow)


class PushConfigs:
    """Checks and stores push configs; the handler calls it once the task is known."""

    def __init__(self, store: PushConfigStore, guard: WebhookGuard) -> None:
        self.store = store
        self.guard = guard

    async def check(self, config: PushNotificationConfig) -> None:
        """Refuse a config the agent will not deliver to (``InvalidParamsError``)."""
        _check_headers(config.headers)
        try:
            scheme_for(config.authentication)
        except ValueError as exc:
            raise InvalidParamsError(str(exc)) from None
        try:
            await self.guard.check_url(config.url)
        except WebhookRefused as exc:
            raise InvalidParamsError(
                f"pushNotificationConfig.url is refused: {exc}. An agent posts notifications "
                "only over https to public addresses (the server may allow more ranges with "
                "--allow-push-to)."
            ) from None

    async def save(
        self, task_id: str, config: PushNotificationConfig, version: str = "0.3"
    ) -> TaskPushNotificationConfig:
        """Store a checked ``config`` for the task (its id is the task's when not given),
        set in A2A ``version``: its notifications are posted in that version's shape."""
        if not config.id:
            config = config.model_copy(update={"id": task_id})
        await self.store.set_push_config(task_id, config, version)
        return TaskPushNotificationConfig(task_id=task_id, push_notification_config=config)

    async def get(
        self,
        task_id: str,
        config_id: str | None,
        missing: type[A2AError] = InvalidParamsError,
    ) -> TaskPushNotificationConfig:
        """The task's config ``config_id`` (the task's id when ``None``); raises ``missing``
        when the task has no such config."""
        config_id = config_id or task_id
        config = await self.store.get_push_config(task_id, config_id)
        if config is None:
            raise missing(f"Task {task_id} has no push notification config {config_id!r}")
        return TaskPushNotificationConfig(task_id=task_id, push_notification_config=config)

    async def list(self, task_id: str) -> list[TaskPushNotificationConfig]:
        return [
            TaskPushNotificationConfig(task_id=task_id, push_notification_config=config)
            for config in await self.store.list_push_configs(task_id)
        ]

    async def delete(self, task_id: str, config_id: str) -> None:
        """Remove a config (no error if the task has no such config)."""
        await self.store.delete_push_config(task_id, config_id)


MAX_HEADERS = 32
"""Headers a push config may carry (2025-early's ``headers``)."""
MAX_HEADER_LENGTH = 4096
"""Characters of one header's value."""
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,256}")
_VALUE = re.compile(r"[^\x00-\x08\x0a-\x1f\x7f]*")


def _check_headers(headers: dict[str, str] | None) -> None:
    """Refuse headers that HTTP cannot carry or that would make a notification large:
    names must be tokens, values free of control characters (RFC 9110 5.1, 5.5)."""
    if not headers:
        return
    if len(headers) > MAX_HEADERS:
        raise InvalidParamsError(f"headers: at most {MAX_HEADERS} headers, not {len(headers)}")
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise InvalidParamsError(f"headers: {shorten(name, 40)!r} is not an HTTP header name")
        if len(value) > MAX_HEADER_LENGTH or not _VALUE.fullmatch(value):
            raise InvalidParamsError(
                f"headers: the value of {name} must be at most {MAX_HEADER_LENGTH} "
                "characters, with no line breaks or other control characters"
            )
