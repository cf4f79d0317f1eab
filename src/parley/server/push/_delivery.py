"""One delivery attempt: the signed POST of a Task to a webhook, and what its answer means.

The request (spec 9.5): ``POST <config.url>`` with the Task as JSON, and

- ``Content-Type: application/json``;
- ``X-A2A-Notification-Token``: the config's ``token``, when it has one;
- ``Authorization: Bearer <JWT>``: a JWT signed with the agent's current key (``kid`` in
  its header; the public keys at ``/.well-known/jwks.json``) with the claims ``iss`` (the
  agent's URL, when known), ``aud`` (the webhook URL), ``iat``, ``exp`` (``iat`` + 5
  minutes), ``jti`` (unique per attempt), ``task_id`` and ``request_body_sha256`` (hex
  SHA-256 of the exact body bytes).

When the config's ``authentication`` gives ``credentials`` for a scheme the receiver
accepts (``Bearer`` or ``Basic``), those go in ``Authorization`` as the spec describes,
and the JWT moves to ``X-A2A-Notification-JWT``.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx

from parley.server.agent._ids import new_id
from parley.server.auth._keys import SigningKeys
from parley.server.push._guard import WebhookRefused
from parley.types import PushNotificationAuthenticationInfo, PushNotificationConfig

JWT_HEADER = "X-A2A-Notification-JWT"
TOKEN_HEADER = "X-A2A-Notification-Token"
JWT_LIFETIME = 300
"""Seconds a notification's JWT is valid for (its ``exp`` after its ``iat``)."""
SCHEMES = ("Bearer", "Basic")
"""The ``authentication.schemes`` parley can authenticate to a webhook with."""
_RETRIED_STATUSES = frozenset({408, 425, 429})


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt came to."""

    delivered: bool
    retry: bool
    """Worth trying again (a connection error, a timeout, 408, 425, 429 or 5xx)."""
    reason: str
    """What happened, for the log: the status, or the error."""
    retry_after: float | None = None
    """Seconds the webhook asked us to wait (``Retry-After``)."""
    status: int | None = None
    """The webhook's HTTP status, when it answered."""


def scheme_for(authentication: PushNotificationAuthenticationInfo | None) -> str | None:
    """The scheme parley authenticates with for ``authentication`` (``None``: the JWT
    alone). Raises ``ValueError`` naming the schemes it supports when it can use none."""
    if authentication is None or authentication.credentials is None:
        return None
    for scheme in authentication.schemes:
        for known in SCHEMES:
            if scheme.lower() == known.lower():
                return known
    raise ValueError(
        f"authentication.schemes {authentication.schemes} has no scheme parley can send "
        f"credentials with; use one of {', '.join(SCHEMES)}, or give no credentials (then "
        "the agent's signed JWT is sent as a Bearer token)"
    )


_OWN_HEADERS = frozenset(
    {"content-type", "content-length", "host", "authorization", "connection",
     "transfer-encoding", TOKEN_HEADER.lower(), JWT_HEADER.lower()}
)  # fmt: skip
"""Headers the agent writes itself: a config's ``headers`` never replace them."""


def notification_headers(
    config: PushNotificationConfig,
    task_id: str,
    body: bytes,
    keys: SigningKeys,
    issuer: str | None = None,
) -> dict[str, str]:
    """The headers of one attempt (with a fresh JWT)."""
    issued = int(time.time())
    claims: dict[str, object] = {
        "aud": config.url,
        "iat": issued,
        "exp": issued + JWT_LIFETIME,
        "jti": new_id(),
        "task_id": task_id,
        "request_body_sha256": hashlib.sha256(body).hexdigest(),
    }
    if issuer:
        claims["iss"] = issuer
    token = keys.sign(claims)
    headers = {
        name: value
        for name, value in (config.headers or {}).items()
        if name.lower() not in _OWN_HEADERS
    }
    headers["Content-Type"] = "application/json"
    if config.token:
        headers[TOKEN_HEADER] = config.token
    scheme = scheme_for(config.authentication)
    if scheme is None:
        headers["Authorization"] = f"Bearer {token}"
        return headers
    credentials = config.authentication.credentials if config.authentication else None
    assert credentials is not None
    if scheme == "Basic" and ":" in credentials:
        credentials = base64.b64encode(credentials.encode()).decode()
    headers["Authorization"] = f"{scheme} {credentials}"
    headers[JWT_HEADER] = token
    return headers


async def post(
    client: httpx.AsyncClient,
    config: PushNotificationConfig,
    task_id: str,
    body: bytes,
    keys: SigningKeys,
    issuer: str | None = None,
    trace: Mapping[str, str] | None = None,
) -> Outcome:
    """POST one notification and say what came of it (never raises for network trouble).

    ``trace``: the trace context headers it carries (``traceparent``, ...)."""
    try:
        headers = notification_headers(config, task_id, body, keys, issuer)
        if trace:
            headers.update(trace)
        response = await client.post(config.url, content=body, headers=headers)
    except WebhookRefused as exc:
        return Outcome(delivered=False, retry=False, reason=f"refused by the SSRF guard: {exc}")
    except ValueError as exc:  # an authentication the config no longer allows
        return Outcome(delivered=False, retry=False, reason=str(exc))
    except (httpx.TransportError, OSError) as exc:
        return Outcome(delivered=False, retry=True, reason=f"{type(exc).__name__}: {exc}")
    status = response.status_code
    reason = f"HTTP {status}"
    if 200 <= status < 300:
        return Outcome(delivered=True, retry=False, reason=reason, status=status)
    if response.is_redirect:
        where = response.headers.get("Location", "?")
        reason = f"{reason}, a redirect to {where}: not followed; set the final URL"
        return Outcome(delivered=False, retry=False, reason=reason, status=status)
    if status in _RETRIED_STATUSES or status >= 500:
        wait = retry_after(response.headers.get("Retry-After"))
        return Outcome(False, True, reason, retry_after=wait, status=status)
    return Outcome(delivered=False, retry=False, reason=reason, status=status)


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
