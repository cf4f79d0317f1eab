"""Push notification configuration: where and how an agent posts task updates (spec 6.8-6.10)."""

from __future__ import annotations

from parley.types._base import A2AModel


class PushNotificationAuthenticationInfo(A2AModel):
    schemes: list[str]
    """Authentication schemes the receiver accepts, e.g. ``Bearer``."""
    credentials: str | None = None


class PushNotificationConfig(A2AModel):
    url: str
    """Callback URL the agent posts updates to."""
    id: str | None = None
    """Set by the client to tell several callbacks of one task apart."""
    token: str | None = None
    """Opaque token the agent sends back so the receiver can check the notification."""
    authentication: PushNotificationAuthenticationInfo | None = None
    """How the agent authenticates to the callback URL."""
    headers: dict[str, str] | None = None
    """Further HTTP headers the agent sends with every notification: the 2025-early
    dialect's ``headers`` (its ``Authorization`` is ``authentication``). No field of
    v0.3 or v1.0."""


class TaskPushNotificationConfig(A2AModel):
    """A push config bound to a task; also the params of ``tasks/pushNotificationConfig/set``."""

    task_id: str
    push_notification_config: PushNotificationConfig
