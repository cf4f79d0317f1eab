"""The task lifecycle under ordinary timing, over real HTTP on 127.0.0.1 with the demo
agent, on every store (spec 6.3 multi-turn, 7.1 message/send, 7.4 tasks/cancel).

Each case here once failed: an answer sent right after ``input-required`` refused,
one of two concurrent answers silently dropped, finished tasks left in the registry,
a second concurrent cancel answered ``-32006`` (``messageId`` is checked in
``tests/bindings/test_message_id.py``).
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.demo import create_demo_app
from parley.protocol import InvalidParamsError
from parley.types import (
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Role,
    TaskIdParams,
    TaskState,
    TextPart,
)
from tests.servers import running
from tests.stores.databases import STORES, served_store

_ids = itertools.count(1)


def _message(text: str, **fields: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "kind": "message",
        "messageId": f"lifecycle-{next(_ids)}",
        "parts": [{"kind": "text", "text": text}],
        **fields,
    }


V1 = {"A2A-Version": "1.0"}


async def _rpc(
    client: httpx.AsyncClient, method: str, params: Any, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = await client.post("/", json=request, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def _ask_for_details(client: httpx.AsyncClient) -> dict[str, Any]:
    asked = await _rpc(client, "message/send", {"message": _message("book a flight")})
    task: dict[str, Any] = asked["result"]
    assert task["status"]["state"] == "input-required"
    return task


MANY_TRIALS = [
    "memory",
    "sqlite",
    pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.timeout(360)]),
]
"""``STORES`` for the tests of 50 to 100 trials: PostgreSQL opens a new connection for
each store call here, which on a machine busy with other test runs can take longer than
the default limit, so it has a longer one; the trials stay as many."""


def _serve(kind: str, tmp_path: Path) -> Any:
    return served_store(kind, tmp_path)


@pytest.mark.parametrize("kind", MANY_TRIALS)
def test_an_answer_right_after_input_required_is_taken(kind: str, tmp_path: Path) -> None:
    """100 of 100: the run slot is free before the asking caller is woken (spec 6.3)."""

    async def trials(base: str) -> list[str]:
        states = []
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            for _ in range(100):
                task = await _ask_for_details(client)
                answer = _message("from Oslo to Rome on 2026-12-01", taskId=task["id"])
                answered = await _rpc(client, "message/send", {"message": answer})
                assert "error" not in answered, answered
                states.append(answered["result"]["status"]["state"])
        return states

    with _serve(kind, tmp_path) as store, running(create_demo_app(task_store=store)) as base:
        states = asyncio.run(trials(base))
    assert states == ["input-required"] * 100  # each asked for consent: the answer was acted on


@pytest.mark.parametrize("kind", MANY_TRIALS)
def test_two_concurrent_answers_are_never_lost(kind: str, tmp_path: Path) -> None:
    """50 trials: never both refused; an answer told success is always in the history
    (when the first run ends before the second answer arrives, both are taken)."""

    async def trials(base: str) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            for _ in range(50):
                task = await _ask_for_details(client)
                answers = [
                    _message(f"from {origin} to Rome on 2026-12-01", taskId=task["id"])
                    for origin in ("Oslo", "Bergen")
                ]
                replies = await asyncio.gather(
                    *(_rpc(client, "message/send", {"message": a}) for a in answers)
                )
                taken = [a for a, r in zip(answers, replies, strict=True) if "result" in r]
                refused = [r["error"] for r in replies if "error" in r]
                assert taken, replies
                for refusal in refused:
                    assert refusal["code"] == -32602
                    assert "still working on an earlier message" in refusal["message"]
                got = await _rpc(client, "tasks/get", {"id": task["id"]})
                history = [m["messageId"] for m in got["result"]["history"]]
                for answer in taken:
                    assert answer["messageId"] in history, (replies, got)  # stored, acted on
                assert len(history) == len(set(history))
                assert got["result"]["status"]["state"] == "input-required"

    with _serve(kind, tmp_path) as store, running(create_demo_app(task_store=store)) as base:
        asyncio.run(trials(base))


@pytest.mark.parametrize("kind", STORES)
def test_concurrent_cancels_both_answer_canceled(kind: str, tmp_path: Path) -> None:
    """CancelTask is idempotent in v1.0 (v1.0.1 3.3.1): cancels at once, and one after,
    all answer the canceled task. A v0.3 tasks/cancel of the canceled task answers
    -32002 (v0.3.0 8.2: a task already canceled cannot be canceled)."""

    async def scenario(base: str) -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            counting = _message("count to 300")
            params = {"message": counting, "configuration": {"blocking": False}}
            started = (await _rpc(client, "message/send", params))["result"]
            cancel = {"id": started["id"]}
            at_once = (_rpc(client, "CancelTask", cancel, V1) for _ in range(3))
            replies = await asyncio.gather(*at_once)
            replies.append(await _rpc(client, "CancelTask", cancel, V1))
            replies.append(await _rpc(client, "tasks/cancel", cancel))
            return replies

    with _serve(kind, tmp_path) as store:
        app = create_demo_app(task_store=store)
        with running(app) as base:
            replies = asyncio.run(scenario(base))
            live = {live.task_id: live for live in app.handler.runs.registry}
    states = [r.get("result", r)["status"]["state"] for r in replies[:4]]
    assert states == ["TASK_STATE_CANCELED"] * 4
    assert replies[4]["error"]["code"] == -32002
    assert live == {}


@pytest.mark.parametrize("kind", STORES)
def test_a_cancel_before_the_answers_run_began_lets_the_task_go(kind: str, tmp_path: Path) -> None:
    """An answer and a cancel of an ``input-required`` task at once: the cancel may end
    the answer's run before its first step (the two are ordered within one turn of the
    loop, so this one drives the handler in process). The run is not canceled then but
    ended, and lets the task go; canceled before it began, it never did, and the task
    stayed in the registry, its run among the background tasks. (On Python 3.12+ a run
    starts eagerly, within the send: the cancel comes after its first step.)"""

    async def race(app: Any) -> tuple[list[Any], dict[str, Any], int]:
        handler = app.handler
        async with app.lifespan():
            asked = await handler.send_message(MessageSendParams(message=_user("book a flight")))
            assert asked.status.state == TaskState.input_required
            answer = MessageSendParams(
                message=_user("to Paris", task_id=asked.id, context_id=asked.context_id),
                configuration=MessageSendConfiguration(blocking=False),
            )
            replies = await asyncio.gather(
                handler.send_message(answer),
                handler.cancel_task(TaskIdParams(id=asked.id)),
                return_exceptions=True,
            )
            for _ in range(50):  # the run, if it began, ends within a few turns
                if not handler.runs.registry:
                    break
                await asyncio.sleep(0.01)
            states = [getattr(reply, "status", reply) for reply in replies]
            return (
                states,
                {live.task_id: live for live in handler.runs.registry},
                len(handler.runs._background),
            )

    with _serve(kind, tmp_path) as store:
        (answered, canceled), live, background = asyncio.run(
            race(create_demo_app(task_store=store))
        )
    assert canceled.state == TaskState.canceled
    if kind == "memory" and sys.version_info >= (3, 12):
        # taken, and its run, all of it in its first step on the memory store, asked
        # again within the send: the cancel came after it
        assert answered.state == TaskState.input_required
    else:
        # taken, then canceled (the memory store: the race); or refused, the cancel first
        assert isinstance(answered, InvalidParamsError) or answered.state == TaskState.canceled
    assert live == {}
    assert background == 0


def _user(text: str, **fields: Any) -> Message:
    return Message(
        role=Role.user, message_id=f"lifecycle-{next(_ids)}", parts=[TextPart(text=text)], **fields
    )


@pytest.mark.parametrize("kind", STORES)
def test_finished_tasks_leave_the_registry(kind: str, tmp_path: Path) -> None:
    """message/send and tasks/cancel on a finished task hold it only for the call."""

    async def scenario(base: str) -> tuple[int, int]:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            done = await _rpc(client, "message/send", {"message": _message("tell me a joke")})
            task_id = done["result"]["id"]
            refused = 0
            for _ in range(20):
                more = _message("again", taskId=task_id)
                refused += "error" in await _rpc(client, "message/send", {"message": more})
                canceled = await _rpc(client, "tasks/cancel", {"id": task_id})
                assert canceled["error"]["code"] == -32002  # completed: not cancelable
            return refused, 20

    with _serve(kind, tmp_path) as store:
        app = create_demo_app(task_store=store)
        with running(app) as base:
            refused, sent = asyncio.run(scenario(base))
            live = {live.task_id: live for live in app.handler.runs.registry}
    assert refused == sent
    assert live == {}
