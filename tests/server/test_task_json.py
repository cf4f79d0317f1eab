"""The task a call answers with is the task as it is now, and as the store holds it:
after a second turn, with historyLength, after a cancel, after parts added in place (the
guard for any reuse of the store's JSON in the response)."""

from __future__ import annotations

import httpx

from tests.server.rpc import result, send


def _texts(task: dict[str, object]) -> list[str]:
    history = task.get("history") or []
    assert isinstance(history, list)
    return [m["parts"][0]["text"] for m in history]


async def test_a_second_turn_answers_with_the_task_after_it(client: httpx.AsyncClient) -> None:
    asked = await send(client, "ask")
    assert asked["status"]["state"] == "input-required"
    assert asked == await result(client, "tasks/get", {"id": asked["id"]})
    answered = await send(client, "more", taskId=asked["id"])
    assert answered["status"]["state"] == "completed"
    assert _texts(answered) == ["ask", "What else?", "more"]
    assert answered["artifacts"][0]["parts"][0]["text"] == "ask | more"
    assert answered == await result(client, "tasks/get", {"id": asked["id"]})


async def test_history_length_answers_with_the_trimmed_task(client: httpx.AsyncClient) -> None:
    asked = await send(client, "ask")
    trimmed = await send(client, "more", taskId=asked["id"], configuration={"historyLength": 1})
    assert _texts(trimmed) == ["more"]
    whole = await result(client, "tasks/get", {"id": asked["id"]})
    assert _texts(whole) == ["ask", "What else?", "more"]
    assert {**whole, "history": trimmed["history"]} == trimmed
    again = await result(client, "tasks/get", {"id": asked["id"], "historyLength": 2})
    assert _texts(again) == ["What else?", "more"]


async def test_cancel_answers_with_the_canceled_task(client: httpx.AsyncClient) -> None:
    asked = await send(client, "ask")
    canceled = await result(client, "tasks/cancel", {"id": asked["id"]})
    assert canceled["status"]["state"] == "canceled"
    assert canceled == await result(client, "tasks/get", {"id": asked["id"]})
    assert asked["status"]["state"] == "input-required"


async def test_chunks_added_in_place_are_in_the_answer(client: httpx.AsyncClient) -> None:
    task = await send(client, "chunks 3")
    assert [p["text"] for p in task["artifacts"][0]["parts"]] == ["0,", "1,", "2,"]
    assert task == await result(client, "tasks/get", {"id": task["id"]})
