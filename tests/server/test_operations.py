"""message/send, tasks/get, tasks/cancel and the rest (spec 7, A2A's "Life of a Task")."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.server.agents import ScriptedAgent
from tests.server.rpc import error, result, send, user_message


async def test_send_creates_a_task_that_completes(client: httpx.AsyncClient) -> None:
    """Spec 7.1: message/send answers with the task; blocking (absent) waits for the end."""
    task = await send(client, "echo hello")
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "hello"}]
    assert task["history"][0]["parts"][0]["text"] == "echo hello"
    assert task["history"][0]["taskId"] == task["id"]
    assert task["history"][0]["contextId"] == task["contextId"]


async def test_direct_message_reply_creates_no_task(client: httpx.AsyncClient) -> None:
    """Spec 7.1: the result may be a Message; then there is no task to get."""
    reply = await send(client, "reply just this")
    assert reply["kind"] == "message"
    assert reply["role"] == "agent"
    assert reply["parts"][0]["text"] == "just this"


async def test_continue_a_task_by_task_id(client: httpx.AsyncClient) -> None:
    """ "Life of a Task": an input-required task continues with the next message for its taskId."""
    first = await send(client, "ask")
    assert first["status"]["state"] == "input-required"
    assert first["status"]["message"]["parts"][0]["text"] == "What else?"
    second = await send(client, "more", taskId=first["id"])
    assert second["id"] == first["id"]
    assert second["contextId"] == first["contextId"]
    assert second["status"]["state"] == "completed"
    assert second["artifacts"][0]["parts"][0]["text"] == "ask | more"
    texts = [m["parts"][0]["text"] for m in second["history"]]
    assert texts == ["ask", "What else?", "more"]


async def test_continue_a_context_starts_a_new_task_in_it(client: httpx.AsyncClient) -> None:
    """Spec 6.4: a contextId without taskId starts a new task in that context."""
    first = await send(client, "echo one")
    second = await send(client, "echo two", contextId=first["contextId"])
    assert second["id"] != first["id"]
    assert second["contextId"] == first["contextId"]


async def test_referenced_tasks_are_handed_to_the_agent(client: httpx.AsyncClient) -> None:
    """Spec 6.4 referenceTaskIds: the agent sees the tasks the message refers to."""
    first = await send(client, "echo one")
    second = await send(client, "refs", referenceTaskIds=[first["id"], "unknown-task"])
    assert second["artifacts"][0]["parts"][0]["text"] == first["id"]


async def test_message_to_a_terminal_task_is_refused(client: httpx.AsyncClient) -> None:
    """Spec 7.1: a task in a terminal state can't be restarted; sending to it is an error."""
    task = await send(client, "echo done")
    err = await error(client, "message/send", {"message": user_message("again", taskId=task["id"])})
    assert err["code"] == -32602
    assert "completed" in err["message"]
    assert "terminal" in err["message"]
    unchanged = await result(client, "tasks/get", {"id": task["id"]})
    assert unchanged == task


async def test_message_to_an_unknown_task_is_task_not_found(client: httpx.AsyncClient) -> None:
    """Spec 8.2: -32001 for a task id the server does not know."""
    err = await error(client, "message/send", {"message": user_message("x", taskId="nope")})
    assert err["code"] == -32001


async def test_mismatched_context_is_refused(client: httpx.AsyncClient) -> None:
    first = await send(client, "ask")
    params = {"message": user_message("x", taskId=first["id"], contextId="other")}
    assert (await error(client, "message/send", params))["code"] == -32602


async def test_non_blocking_send_returns_at_once(
    client: httpx.AsyncClient, agent: ScriptedAgent
) -> None:
    """Spec 7.1.2 blocking=false: the answer comes before the task is done."""
    task = await send(client, "slow", configuration={"blocking": False})
    assert task["status"]["state"] in {"submitted", "working"}
    agent.release.set()
    for _ in range(100):
        current = await result(client, "tasks/get", {"id": task["id"]})
        if current["status"]["state"] == "completed":
            break
        await asyncio.sleep(0.01)
    assert current["status"]["state"] == "completed"


async def test_history_length_trims_history(client: httpx.AsyncClient) -> None:
    """Spec 7.1.2, 7.3.1: historyLength keeps only the latest messages."""
    first = await send(client, "ask")
    await send(client, "more", taskId=first["id"])
    trimmed = await result(client, "tasks/get", {"id": first["id"], "historyLength": 1})
    assert [m["parts"][0]["text"] for m in trimmed["history"]] == ["more"]
    none = await result(client, "tasks/get", {"id": first["id"], "historyLength": 0})
    assert none["history"] == []
    sent = await send(client, "echo x", configuration={"historyLength": 0})
    assert sent["history"] == []


async def test_negative_history_length_is_invalid_params(client: httpx.AsyncClient) -> None:
    """Spec 7.3: historyLength is a count; a negative one is -32602."""
    task = await send(client, "echo x")
    err = await error(client, "tasks/get", {"id": task["id"], "historyLength": -1})
    assert err["code"] == -32602
    assert "historyLength" in err["message"]


async def test_get_unknown_task_is_task_not_found(client: httpx.AsyncClient) -> None:
    assert (await error(client, "tasks/get", {"id": "missing"}))["code"] == -32001


async def test_cancel_a_running_task(client: httpx.AsyncClient, agent: ScriptedAgent) -> None:
    """Spec 7.4: tasks/cancel answers with the task, canceled; the agent is told."""
    task = await send(client, "slow", configuration={"blocking": False})
    canceled = await result(client, "tasks/cancel", {"id": task["id"]})
    assert canceled["status"]["state"] == "canceled"
    assert agent.canceled == [task["id"]]
    again = await result(client, "tasks/get", {"id": task["id"]})
    assert again["status"]["state"] == "canceled"


async def test_cancel_a_waiting_task(client: httpx.AsyncClient) -> None:
    task = await send(client, "ask")
    canceled = await result(client, "tasks/cancel", {"id": task["id"]})
    assert canceled["status"]["state"] == "canceled"


async def test_cancel_a_finished_task_is_not_cancelable(client: httpx.AsyncClient) -> None:
    """Spec 8.2: -32002 for a task already in a terminal state."""
    task = await send(client, "echo x")
    err = await error(client, "tasks/cancel", {"id": task["id"]})
    assert err["code"] == -32002
    assert (await error(client, "tasks/cancel", {"id": "missing"}))["code"] == -32001


async def test_agent_failure_fails_the_task_without_leaking(client: httpx.AsyncClient) -> None:
    """An agent that raises ends its task failed with a safe message, never its text."""
    task = await send(client, "boom")
    assert task["status"]["state"] == "failed"
    said = task["status"]["message"]["parts"][0]["text"]
    assert "hunter2" not in said
    assert "RuntimeError" not in said
    assert said == "The agent failed while working on this task."


async def test_agent_returning_early_fails_the_task(client: httpx.AsyncClient) -> None:
    task = await send(client, "quit")
    assert task["status"]["state"] == "failed"
    assert "without finishing" in task["status"]["message"]["parts"][0]["text"]


async def test_second_message_for_a_running_task_is_refused(
    client: httpx.AsyncClient, agent: ScriptedAgent
) -> None:
    """At most one agent run per task: a message for a task whose agent is still running is
    refused with a clear error (never queued and silently dropped), and nothing is lost."""
    first = await send(client, "ask")
    agent.release.clear()
    running = await send(client, "slow", taskId=first["id"], configuration={"blocking": False})
    assert running["status"]["state"] in {"input-required", "working"}
    err = await error(client, "message/send", {"message": user_message("x", taskId=first["id"])})
    assert err["code"] == -32602
    assert "still working" in err["message"]
    agent.release.set()
    assert agent.runs == ["ask", "slow"]
    for _ in range(100):
        task = await result(client, "tasks/get", {"id": first["id"]})
        if task["status"]["state"] == "completed":
            break
        await asyncio.sleep(0.01)
    assert [m["parts"][0]["text"] for m in task["history"]] == ["ask", "What else?", "slow"]


async def test_push_notification_methods_are_not_supported(client: httpx.AsyncClient) -> None:
    """Spec 8.2: -32003 while the agent does not support push notifications."""
    task = await send(client, "echo x")
    config = {"taskId": task["id"], "pushNotificationConfig": {"url": "http://127.0.0.1:1/hook"}}
    calls = [
        ("tasks/pushNotificationConfig/set", config),
        ("tasks/pushNotificationConfig/get", {"id": task["id"]}),
        ("tasks/pushNotificationConfig/list", {"id": task["id"]}),
        (
            "tasks/pushNotificationConfig/delete",
            {"id": task["id"], "pushNotificationConfigId": "c"},
        ),
    ]
    for method, params in calls:
        assert (await error(client, method, params))["code"] == -32003
    push = {
        "message": user_message("echo x"),
        "configuration": {"pushNotificationConfig": {"url": "http://127.0.0.1:1/h"}},
    }
    assert (await error(client, "message/send", push))["code"] == -32003


async def test_extended_card_not_configured(client: httpx.AsyncClient) -> None:
    """Spec 7.10, 8.2: -32007 when there is no authenticated extended card."""
    assert (await error(client, "agent/getAuthenticatedExtendedCard"))["code"] == -32007


async def test_every_operation_needing_a_capability_is_refused_without_it() -> None:
    """Spec 5.5.2, 7.10: an operation whose capability the card leaves out is refused with
    the error the operation table's ``capability`` names, on every such row."""
    from parley.protocol import (
        OPERATIONS,
        A2AError,
        AuthenticatedExtendedCardNotConfiguredError,
        Capability,
        PushNotificationNotSupportedError,
        UnsupportedOperationError,
    )
    from parley.server import RequestHandler
    from parley.types import AgentCapabilities
    from tests.server.agents import card

    expected: dict[Capability, type[A2AError]] = {
        Capability.streaming: UnsupportedOperationError,
        Capability.push_notifications: PushNotificationNotSupportedError,
        Capability.extended_card: AuthenticatedExtendedCardNotConfiguredError,
    }
    handler = RequestHandler(ScriptedAgent(), card(capabilities=AgentCapabilities()))
    needing = [operation for operation in OPERATIONS if operation.capability is not None]
    assert {operation.capability for operation in needing} == set(expected)
    for operation in needing:
        assert operation.capability is not None
        params = None
        if operation.params is not None:
            params = operation.params.model_validate(_SAMPLE_PARAMS[operation.name])
        with pytest.raises(expected[operation.capability]):
            await getattr(handler, operation.name)(params)


_SAMPLE_PARAMS: dict[str, object] = {
    "stream_message": {
        "message": {"role": "user", "parts": [{"kind": "text", "text": "hi"}], "messageId": "m"}
    },
    "resubscribe": {"id": "t1"},
    "set_push_config": {"taskId": "t1", "pushNotificationConfig": {"url": "https://x.test/"}},
    "get_push_config": {"id": "t1"},
    "list_push_configs": {"id": "t1"},
    "delete_push_config": {"id": "t1", "pushNotificationConfigId": "c1"},
}
