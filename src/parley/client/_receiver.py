"""The receiving end of push notifications: an ASGI app that checks each one, then hands
the Task to your code.

A notification is accepted only when all of these hold:

1. its JWT (``X-A2A-Notification-JWT``, else ``Authorization: Bearer``) is signed by a key
   of the agent's key set (``AgentKeys``: its ``/.well-known/jwks.json``), names it by
   ``kid``, and has ``iat``, ``exp``, ``jti`` and ``request_body_sha256``;
2. it is fresh: ``exp`` has not passed and ``iat`` is at most ``max_age`` seconds old
   (and not in the future, beyond ``leeway``);
3. ``request_body_sha256`` is the SHA-256 of the body received, so the body is the one
   the agent signed;
4. ``aud`` is this receiver's URL, when ``audience`` is given;
5. ``X-A2A-Notification-Token`` is the token you gave in the push config, when ``token``
   is given;
6. its ``jti`` was not seen before (a replay is refused until the JWT expires);
7. the body is a Task, the one the JWT's ``task_id`` names: a v0.3 Task, or the v1.0
   ``StreamResponse`` holding it (``{"task": ...}``, v1.0.1 §4.3.3: what a parley agent
   posts to a config set in v1.0).

Answers: 200 accepted; 400 not a Task (a v1.0 ``statusUpdate``, ``artifactUpdate`` or
``message`` notification is refused so: parley's receiver hands on whole tasks); 401 a
JWT or token that does not check out, or a stale one; 409 a replay; 405 not a POST; 413
too large; 500 when your callback raised (the agent then retries). A refusal's body is
``{"error": "..."}`` saying why.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jwt
from pydantic import ValidationError

from parley._extras import require
from parley.client._errors import ClientError
from parley.client._jwks import AgentKeys
from parley.protocol import ConversionError
from parley.protocol.v1 import event_from_v1
from parley.types import Task

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import Receive, Scope, Send

JWT_HEADER = "X-A2A-Notification-JWT"
TOKEN_HEADER = "X-A2A-Notification-Token"
_REQUIRED_CLAIMS = ["iat", "exp", "jti", "request_body_sha256"]


@dataclass(frozen=True, slots=True)
class PushNotification:
    """A notification that passed every check."""

    task: Task
    claims: dict[str, Any]
    """The verified JWT claims (``iss``, ``aud``, ``iat``, ``jti``, ``task_id``, ...)."""
    token: str | None
    """The ``X-A2A-Notification-Token`` it came with."""


class Refused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class PushReceiver:
    """An ASGI app receiving an agent's push notifications (mount it in Starlette or
    FastAPI, or run it with uvicorn); each verified one is passed to ``on_notification``.

    ``keys`` are the agent's public keys (``AgentKeys.of_agent(agent_url)``). ``token``
    is the ``X-A2A-Notification-Token`` to require: a string, or a function of the task
    id giving the token set for that task (``None``: any). ``audience`` is the URL the
    agent posts to, to require as the JWT's ``aud``.
    """

    def __init__(
        self,
        on_notification: Callable[[PushNotification], Awaitable[None]],
        keys: AgentKeys,
        *,
        token: str | Callable[[str], str | None] | None = None,
        audience: str | None = None,
        max_age: float = 300.0,
        leeway: float = 30.0,
        max_body_size: int = 16 * 1024 * 1024,
    ) -> None:
        require("server", "PushReceiver")
        self.on_notification = on_notification
        self.keys = keys
        self.token = token
        self.audience = audience
        self.max_age = max_age
        self.leeway = leeway
        self.max_body_size = max_body_size
        self._seen: dict[str, float] = {}
        """``jti`` -> when its JWT expires; kept until then to refuse replays."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import Request
        from starlette.responses import Response

        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        try:
            notification = await self.verify(request)
        except Refused as refused:
            body = json.dumps({"error": refused.reason}).encode()
            response = Response(body, refused.status, media_type="application/json")
        else:
            try:
                await self.on_notification(notification)
            except Exception:
                response = Response(b'{"error": "the receiver failed"}', 500)
            else:
                response = Response(b"", 200)
        await response(scope, receive, send)

    async def verify(self, request: Request) -> PushNotification:
        """Check one request (see the module docs); raises ``Refused`` with a status."""
        if request.method != "POST":
            raise Refused(405, "notifications are POSTed")
        body = await self._body(request)
        claims = await self._claims(request, body)
        task_id = claims.get("task_id")
        expected = self.token(str(task_id)) if callable(self.token) else self.token
        given = request.headers.get(TOKEN_HEADER)
        if expected is not None and not hmac.compare_digest(
            (given or "").encode(), expected.encode()
        ):
            raise Refused(401, f"{TOKEN_HEADER} is not the token of this task's push config")
        task = _task_of(body)
        if task_id is not None and task.id != task_id:
            raise Refused(401, f"the JWT is for task {task_id}, the body is task {task.id}")
        self._remember(str(claims["jti"]), float(claims["exp"]))
        return PushNotification(task, claims, given)

    async def _body(self, request: Request) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_size:
                raise Refused(413, f"the body is over {self.max_body_size} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _claims(self, request: Request, body: bytes) -> dict[str, Any]:
        token = request.headers.get(JWT_HEADER) or _bearer(request.headers.get("Authorization"))
        if not token:
            raise Refused(401, f"no JWT: expected {JWT_HEADER} or Authorization: Bearer")
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            if not isinstance(kid, str):
                raise Refused(401, "the JWT names no key (kid)")
            key = await self.keys.key(kid)
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[key.algorithm_name],
                audience=self.audience,
                leeway=self.leeway,
                options={"require": _REQUIRED_CLAIMS, "verify_aud": self.audience is not None},
            )
        except jwt.PyJWTError as exc:
            raise Refused(401, f"the JWT does not check out: {exc}") from None
        except ClientError as exc:
            raise Refused(401, exc.message) from None
        self._check_fresh(claims)
        digest = hashlib.sha256(body).hexdigest()
        if not hmac.compare_digest(str(claims["request_body_sha256"]), digest):
            raise Refused(401, "the body is not the one the agent signed (request_body_sha256)")
        return claims

    def _check_fresh(self, claims: dict[str, Any]) -> None:
        now = time.time()
        issued = float(claims["iat"])
        if issued < now - self.max_age:
            raise Refused(401, f"the notification is stale: issued {now - issued:.0f} s ago")
        jti = str(claims["jti"])
        expires = self._seen.get(jti)
        if expires is not None and expires + self.leeway >= now:
            raise Refused(409, f"notification {jti} was received already (a replay)")

    def _remember(self, jti: str, expires: float) -> None:
        now = time.time()
        if len(self._seen) > 1024:  # forget the expired ones now and then
            self._seen = {k: v for k, v in self._seen.items() if v + self.leeway >= now}
        self._seen[jti] = expires


_STREAM_RESPONSE = {"task", "message", "statusUpdate", "artifactUpdate"}
"""The one-of fields of a v1.0 ``StreamResponse``."""


def _task_of(body: bytes) -> Task:
    """The Task a notification carries: the body itself (v0.3), or the ``task`` of a
    v1.0 ``StreamResponse``."""
    try:
        data = json.loads(body)
    except ValueError:
        raise Refused(400, "the body is not JSON") from None
    try:
        if isinstance(data, dict) and len(data) == 1 and data.keys() <= _STREAM_RESPONSE:
            (kind,) = data
            if kind != "task":
                raise Refused(
                    400,
                    f"the body is a v1.0 {kind!r} notification; this receiver takes "
                    "notifications that carry the whole task",
                )
            return Task.model_validate(event_from_v1(data))
        return Task.model_validate(data)
    except ValidationError as exc:
        raise Refused(400, f"the body is not a Task: {exc.errors()[0]['msg']}") from None
    except ConversionError as exc:  # the v1.0 mapping's own words
        raise Refused(400, f"the body is not a v1.0 task: {exc}"[:300]) from None
    except (ValueError, TypeError, KeyError, AttributeError):
        # what the v1.0 mapping meets in a malformed StreamResponse: said without the
        # exception's own text, which names parley's code, not the sender's mistake
        raise Refused(
            400, "the body is not a v1.0 task: its task is not a Task object (id, status, ...)"
        ) from None


def _bearer(header: str | None) -> str | None:
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None
