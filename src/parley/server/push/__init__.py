"""Push notifications, the agent's side: the SSRF guard, one delivery attempt, the
delivery worker that empties the outbox.

Sits on ``parley.server`` (signing keys, ids), ``parley.stores`` (push configs, the
outbox) and ``parley.types``. The request handler serves the config operations; the app
owns the worker and the signing keys. See docs/push.md.
"""

from parley.server.push._configs import PushSettings
from parley.server.push._delivery import (
    JWT_HEADER,
    TOKEN_HEADER,
    Outcome,
    notification_headers,
    post,
)
from parley.server.push._guard import (
    GuardedTransport,
    Resolver,
    WebhookGuard,
    WebhookRefused,
    address_kind,
    system_resolver,
)
from parley.server.push._worker import PushRetry

__all__ = [
    "JWT_HEADER",
    "TOKEN_HEADER",
    "GuardedTransport",
    "Outcome",
    "PushRetry",
    "PushSettings",
    "Resolver",
    "WebhookGuard",
    "WebhookRefused",
    "address_kind",
    "notification_headers",
    "post",
    "system_resolver",
]
