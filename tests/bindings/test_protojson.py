"""ProtoJSON on the v1.0 wire (v1.0.1 5.5, 9, 11: the ProtoJSON mapping), server and
client: enums read by name or number, an enum at its default (``*_UNSPECIFIED``) left
out, times kept to the nanosecond. Against the real server of the binding tests."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from parley.client import Client
from parley.protocol.v1 import event_to_v1
from parley.types import Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from tests.bindings.conftest import Served
from tests.server.agents import NANOSECOND

V1 = {"A2A-Version": "1.0"}


def _message(role: Any, text: str = "echo hi") -> dict[str, Any]:
    return {"messageId": f"m-{role}-{text}", "role": role, "parts": [{"text": text}]}


def _rpc(base: str, method: str, params: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer: dict[str, Any] = httpx.post(f"{base}/", json=body, headers=V1, timeout=30).json()
    return answer


@pytest.mark.parametrize("role", [1, "ROLE_USER"])
def test_a_role_by_number_or_name(served: Served, role: Any) -> None:
    """ProtoJSON reads an enum by its name or its number: role 1 is ROLE_USER."""
    answer = _rpc(served.base, "SendMessage", {"message": _message(role)})
    assert answer["result"]["task"]["history"][0]["role"] == "ROLE_USER"
    rest = httpx.post(
        f"{served.base}/message:send", json={"message": _message(role, "echo rest")}, headers=V1
    )
    assert rest.json()["task"]["history"][0]["role"] == "ROLE_USER"


def test_a_state_by_number_and_an_unknown_number(served: Served) -> None:
    """ListTasks' status by number (2: working) filters as by name; a number no TaskState
    has (99) is refused naming the field, never read as unspecified (no filter)."""
    by_number = _rpc(served.base, "ListTasks", {"status": 3})
    assert {t["status"]["state"] for t in by_number["result"]["tasks"]} <= {"TASK_STATE_COMPLETED"}
    unknown = _rpc(served.base, "ListTasks", {"status": 99})
    assert unknown["error"]["code"] == -32602
    assert "status" in unknown["error"]["message"]
    rest = httpx.get(f"{served.base}/tasks", params={"status": "99"}, headers=V1)
    assert rest.status_code == 400


async def test_times_to_the_nanosecond(client: Client) -> None:
    """A Timestamp in ProtoJSON has up to nine fractional digits: a time the agent gives
    to the nanosecond reaches the client whole, on every binding of both versions."""
    events = [event async for event in client.stream_message("nanos")]
    times = {  # the v0.3 proto bindings spell UTC as Z
        e.status.timestamp.replace("Z", "+00:00"): e
        for e in events
        if isinstance(e, TaskStatusUpdateEvent) and e.status.timestamp
    }
    timed = times[NANOSECOND]
    assert timed.status.state is TaskState.working


def test_an_enum_at_its_default_is_left_out() -> None:
    """ProtoJSON leaves a field at its default value out: a state the core does not know
    (TASK_STATE_UNSPECIFIED, 0) is not written; the time keeps its nanoseconds."""
    task = Task(
        id="t", context_id="c", status=TaskStatus(state=TaskState.unknown, timestamp=NANOSECOND)
    )
    assert event_to_v1(task) == {
        "task": {
            "id": "t",
            "contextId": "c",
            "status": {"timestamp": "2026-12-07T20:22:50.123456789Z"},
        }
    }
