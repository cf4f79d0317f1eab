"""A real webhook for push tests: a small Starlette app on uvicorn at 127.0.0.1 that keeps
every request it gets and answers what the test scripts (say, 503 twice, then 200)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from tests.servers import running


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Webhook:
    """What the webhook got; ``answers`` are popped one per request (then 200)."""

    received: list[Received] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)
    retry_after: str | None = None
    redirect_to: str | None = None
    changed: threading.Condition = field(default_factory=threading.Condition)

    async def endpoint(self, request: Request) -> Response:
        if self.redirect_to is not None:
            return RedirectResponse(self.redirect_to, status_code=307)
        body = await request.body()
        with self.changed:
            status = self.answers.pop(0) if self.answers else 200
            if status == 200:
                self.received.append(Received(dict(request.headers), body))
                self.changed.notify_all()
        headers = {"Retry-After": self.retry_after} if self.retry_after and status != 200 else {}
        return Response(b"", status, headers=headers)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/hook", self.endpoint, methods=["POST"])])

    async def wait_for(self, count: int, within: float = 30.0) -> list[Received]:
        """The notifications, once ``count`` are in (fails after ``within`` seconds)."""

        def wait() -> bool:
            with self.changed:
                return self.changed.wait_for(lambda: len(self.received) >= count, within)

        assert await asyncio.to_thread(wait), f"{len(self.received)} of {count} arrived"
        return list(self.received)


@contextmanager
def webhook() -> Iterator[tuple[Webhook, str]]:
    """A running webhook and its URL (``http://127.0.0.1:PORT/hook``)."""
    hook = Webhook()
    with running(hook.app()) as base:
        yield hook, f"{base}/hook"
