"""A real webhook for push tests: an ASGI app on uvicorn at 127.0.0.1 that answers what
the test scripts first (say, 503 twice), then accepts.

With ``keys`` it is parley's receiver (``PushReceiver``) verifying each notification
against the agent's key set, as a real receiver would; without, it keeps what it gets.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from parley.client import AgentKeys, PushNotification, PushReceiver
from parley.types import Task
from tests.servers import running


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Webhook:
    """What the webhook got; ``answers`` are popped one per request (then it accepts)."""

    keys: AgentKeys | None = None
    received: list[Received] = field(default_factory=list)
    """Every request it accepted (raw), in arrival order."""
    tasks: list[Task] = field(default_factory=list)
    """The verified Tasks, in arrival order (with ``keys``)."""
    answers: list[int] = field(default_factory=list)
    retry_after: str | None = None
    redirect_to: str | None = None
    held: threading.Event | None = None
    """When given, every request waits for it to be set (a webhook that hangs)."""
    waiting: int = 0
    """Requests waiting on ``held`` right now."""
    changed: threading.Condition = field(default_factory=threading.Condition)

    def __post_init__(self) -> None:
        self.receiver = None if self.keys is None else PushReceiver(self._keep, self.keys)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if self.held is not None:
            with self.changed:
                self.waiting += 1
                self.changed.notify_all()
            await asyncio.to_thread(self.held.wait, 60)
        if self.redirect_to is not None:
            await RedirectResponse(self.redirect_to, status_code=307)(scope, receive, send)
            return
        with self.changed:
            status = self.answers.pop(0) if self.answers else 200
        if status != 200:
            headers = {"Retry-After": self.retry_after} if self.retry_after else {}
            await Response(b"", status, headers=headers)(scope, receive, send)
            return
        request = Request(scope, receive)
        if self.receiver is not None:
            await self.receiver(scope, receive, send)
            return
        received = Received(dict(request.headers), await request.body())
        with self.changed:
            self.received.append(received)
            self.changed.notify_all()
        await Response(b"", 200)(scope, receive, send)

    async def _keep(self, notification: PushNotification) -> None:
        with self.changed:
            self.tasks.append(notification.task)
            self.changed.notify_all()

    def count(self) -> int:
        return len(self.tasks) if self.receiver is not None else len(self.received)

    async def wait_for(self, count: int, within: float = 60.0) -> None:
        """Return once ``count`` notifications are in (fail after ``within`` seconds)."""

        def wait() -> bool:
            with self.changed:
                return self.changed.wait_for(lambda: self.count() >= count, within)

        assert await asyncio.to_thread(wait), f"{self.count()} of {count} arrived"


@contextmanager
def webhook(
    keys: AgentKeys | None = None, sock: socket.socket | None = None
) -> Iterator[tuple[Webhook, str]]:
    """A running webhook (on ``sock`` when given: see ``listening_socket``) and its URL
    (``http://127.0.0.1:PORT/hook``)."""
    hook = Webhook(keys)
    with running(hook, sock=sock) as base:
        yield hook, f"{base}/hook"
