"""One app serving sends on one event loop after another, and on two at once.

``TaskRuns`` keeps the loop its last run started on rather than asking asyncio for the
running loop per send (a ``getpid`` system call each on Python 3.11): each case here
fails if it keeps a loop that is not the one the send runs on (a closed loop: "Event
loop is closed"; another thread's: a future attached to a different loop).
"""

from __future__ import annotations

import asyncio
import threading

import httpx

from parley.server import create_app
from tests.server.agents import ScriptedAgent, card
from tests.server.rpc import result, user_message


async def _echo(app: object, text: str) -> None:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
        task = await result(client, "message/send", {"message": user_message(f"echo {text}")})
    assert task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"][0]["text"] == text


def test_one_loop_after_another() -> None:
    app = create_app(ScriptedAgent(), card())
    for number in range(3):
        asyncio.run(_echo(app, f"loop {number}"))


def test_a_loop_in_another_thread_while_this_one_runs() -> None:
    app = create_app(ScriptedAgent(), card())
    sent, done = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    async def other() -> None:
        await _echo(app, "the other thread")
        sent.set()
        await asyncio.to_thread(done.wait, 10)  # still running while this thread's loop sends

    def in_thread() -> None:
        try:
            asyncio.run(other())
        except BaseException as error:  # pragma: no cover - reported below
            failures.append(error)
            sent.set()

    thread = threading.Thread(target=in_thread)
    thread.start()
    try:
        assert sent.wait(10)
        asyncio.run(_echo(app, "this thread"))
    finally:
        done.set()
        thread.join(10)
    assert not failures
