"""The official SDK's client (a2a-sdk, its ClientFactory) against a parley server.

One run of ``peers/sdk_client.py`` per binding plays every scenario; each test below
checks one of them. Where a result can be compared whole, it is: what the SDK's client
parsed, dumped back to wire JSON, must equal parley's own wire JSON for the same object,
so a field parley misnames or misplaces (which the SDK would drop or refuse) fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.interop.agents import interop_app
from tests.interop.sdk import run_peer
from tests.servers import running

BINDINGS = ["JSONRPC"]  # HTTP+JSON and GRPC join when parley serves them


class Run:
    """The peer's results by scenario, and the parley server they came from."""

    def __init__(self, url: str, lines: list[dict[str, Any]]) -> None:
        self.url = url
        self.results = {line["scenario"]: line for line in lines}

    def __getitem__(self, scenario: str) -> dict[str, Any]:
        assert scenario in self.results, f"the peer did not report {scenario!r}"
        return self.results[scenario]

    def task(self, task_id: str) -> dict[str, Any]:
        """The task as parley itself puts it on the wire (tasks/get over raw JSON-RPC)."""
        request = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task_id}}
        result: dict[str, Any] = httpx.post(self.url, json=request).json()["result"]
        return result


@pytest.fixture(scope="module", params=BINDINGS)
def run(request: pytest.FixtureRequest, sdk: Path) -> Iterator[Run]:
    transport = request.param
    with (
        running(interop_app()) as url,
        running(interop_app(streaming=False, extended=False)) as plain_url,
    ):
        lines = run_peer(
            sdk, "sdk_client.py", "--url", url, "--plain-url", plain_url, "--transport", transport
        )
        yield Run(url, lines)


def texts(artifact: dict[str, Any]) -> str:
    return "".join(part["text"] for part in artifact["parts"])


def test_card_discovery_gives_the_sdk_the_whole_card(run: Run) -> None:
    """Spec 5.3: the card at /.well-known/agent-card.json, every field understood."""
    card = run["card"]["card"]
    assert card == httpx.get(f"{run.url}/.well-known/agent-card.json").json()
    assert card["url"] == f"{run.url}/"
    assert card["protocolVersion"] == "0.3.0"


def test_send_answers_with_the_task(run: Run) -> None:
    """Spec 7.1: message/send answers with the Task; the SDK parses every field of it."""
    task = run["send_task"]["result"]
    assert task == run.task(task["id"])
    assert task["status"]["state"] == "completed"
    assert texts(task["artifacts"][0]) == "echo: hello interop"
    # Named fields too: equality alone would miss a field lost on both sides.
    assert task["artifacts"][0]["name"] == "response"
    assert task["artifacts"][0]["artifactId"]
    assert task["status"]["timestamp"]
    assert [m["role"] for m in task["history"]] == ["user"]
    assert task["history"][0]["parts"] == [{"kind": "text", "text": "hello interop"}]
    assert task["history"][0]["taskId"] == task["id"]
    assert task["history"][0]["contextId"] == task["contextId"]


def test_send_answers_with_a_direct_message(run: Run) -> None:
    """Spec 7.1: the result may be a Message instead of a Task."""
    reply = run["send_message_reply"]["result"]
    assert reply["kind"] == "message"
    assert reply["role"] == "agent"
    assert reply["parts"] == [{"kind": "text", "text": "hi there"}]


def test_stream_events_rebuild_the_task(run: Run) -> None:
    """Spec 7.2: Task first, then status and artifact updates, the last one final."""
    events = run["stream"]["events"]
    assert events[0]["task"]["status"]["state"] == "submitted"
    updates = [event["update"] for event in events[1:]]
    assert [u["kind"] for u in updates] == [
        "status-update",
        "artifact-update",
        "artifact-update",
        "artifact-update",
        "status-update",
    ]
    assert [u.get("append") for u in updates[1:4]] == [None, True, True]
    assert updates[0]["status"]["state"] == "working"
    assert updates[0]["final"] is False
    assert updates[-1]["status"]["state"] == "completed"
    assert updates[-1]["final"] is True
    rebuilt = run["stream"]["task"]
    assert rebuilt == run.task(rebuilt["id"])
    assert texts(rebuilt["artifacts"][0]) == "chunk 0;chunk 1;chunk 2;"


def test_stream_answers_with_a_direct_message(run: Run) -> None:
    events = run["stream_message_reply"]["events"]
    assert len(events) == 1
    assert events[0]["kind"] == "message"
    assert events[0]["parts"] == [{"kind": "text", "text": "streamed"}]


def test_a_second_turn_continues_the_task(run: Run) -> None:
    """Spec 6.3 / 7.1: input-required, then a message with taskId completes the task."""
    asked = run["ask"]["result"]
    assert asked["status"]["state"] == "input-required"
    assert asked["status"]["message"]["parts"] == [{"kind": "text", "text": "What else?"}]
    answered = run["answer"]["result"]
    assert answered["id"] == asked["id"]
    assert answered["status"]["state"] == "completed"
    assert texts(answered["artifacts"][0]) == "thanks for: more"


def test_get_task_trims_history_to_history_length(run: Run) -> None:
    """Spec 7.3: historyLength keeps only the latest messages."""
    full = run["get_full"]["result"]
    assert full == run.task(full["id"])
    assert len(full["history"]) >= 3
    assert run["get_history_1"]["result"]["history"] == full["history"][-1:]
    assert run["get_history_1"]["result"]["history"][0]["parts"][0]["text"] == "more"
    assert run["get_history_0"]["result"].get("history", []) == []


def test_cancel_answers_with_the_canceled_task(run: Run) -> None:
    """Spec 7.4."""
    assert run["wait_started"]["result"]["status"]["state"] in {"submitted", "working"}
    canceled = run["cancel"]["result"]
    assert canceled["id"] == run["wait_started"]["result"]["id"]
    assert canceled["status"]["state"] == "canceled"
    assert run["get_canceled"]["result"] == run.task(canceled["id"])
    assert run["get_canceled"]["result"]["status"]["state"] == "canceled"


def test_resubscribe_joins_a_running_task(run: Run) -> None:
    """Spec 7.9: the stream resumes on a running task and ends with its final event."""
    events = run["resubscribe"]["events"]
    assert events[0]["task"]["id"] == run["resubscribe"]["task_id"]
    assert events[-1]["update"]["final"] is True
    assert events[-1]["update"]["status"]["state"] == "completed"
    final = run.task(run["resubscribe"]["task_id"])
    assert texts(final["artifacts"][0]) == "part 0;part 1;part 2;"


def test_resubscribe_to_a_finished_task_gives_the_task(run: Run) -> None:
    events = run["resubscribe_finished"]["events"]
    assert len(events) == 1
    assert events[0]["task"] == run.task(run["resubscribe"]["task_id"])


ERRORS = {
    # scenario: (JSON-RPC code, the spec's name for it)
    "error_task_not_found": (-32001, "TaskNotFoundError"),
    "error_cancel_not_found": (-32001, "TaskNotFoundError"),
    "error_not_cancelable": (-32002, "TaskNotCancelableError"),
    "push_set": (-32003, "PushNotificationNotSupportedError"),
    "push_get": (-32003, "PushNotificationNotSupportedError"),
    "error_history_length": (-32602, "InvalidParamsError"),
    "error_terminal_task": (-32602, "InvalidParamsError"),
    # spec 3.3.1: before any event, the stream's one SSE event carries the error
    "error_resubscribe_not_found": (-32001, "TaskNotFoundError"),
    "error_stream_terminal_task": (-32602, "InvalidParamsError"),
}
RAW_JSONRPC_ERRORS = {
    "push_list": (-32003, "PushNotificationNotSupportedError"),
    "push_delete": (-32003, "PushNotificationNotSupportedError"),
    "error_unsupported_operation": (-32004, "UnsupportedOperationError"),
    "error_extended_not_configured": (-32007, "AuthenticatedExtendedCardNotConfiguredError"),
    "error_method_not_found": (-32601, "MethodNotFoundError"),
    "error_invalid_params": (-32602, "InvalidParamsError"),
    "error_parse": (-32700, "JSONParseError"),
    "error_invalid_request": (-32600, "InvalidRequestError"),
}


@pytest.mark.parametrize("scenario", sorted(ERRORS))
def test_every_error_reaches_the_sdk_client_as_its_error(run: Run, scenario: str) -> None:
    """Spec 8.1 / 8.2: each A2A error arrives as the SDK client's JSON-RPC error, code intact.

    a2a-sdk 0.3.26 parses every error object into its generic ``JSONRPCError`` (the first
    member of its ``JSONRPCErrorResponse.error`` union matches any code), so its users
    tell errors apart by ``code``; that is what is checked, with the class it raised.
    """
    code, _name = ERRORS[scenario]
    result = run[scenario]
    assert result["raised"] == "A2AClientJSONRPCError", result
    assert result["code"] == code
    assert result["message"]


@pytest.mark.parametrize("scenario", sorted(RAW_JSONRPC_ERRORS))
def test_errors_outside_the_client_api_parse_as_sdk_error_responses(
    run: Run, scenario: str
) -> None:
    """The SDK's own response models read parley's error responses (spec 6.11, 8)."""
    code, _name = RAW_JSONRPC_ERRORS[scenario]
    result = run[scenario]
    assert result["raised"] == "A2AClientJSONRPCError", result
    assert result["code"] == code
    assert result["status"] == 200
    expected_id = None if scenario == "error_parse" else result["id"]
    assert result["id"] == expected_id


def test_the_sdk_client_fetches_the_extended_card(run: Run) -> None:
    """Spec 7.10: supportsAuthenticatedExtendedCard makes the SDK call
    agent/getAuthenticatedExtendedCard, and it gets the extended card."""
    card = run["extended_card"]["card"]
    assert card["name"] == "parley interop agent (extended)"
    assert [skill["id"] for skill in card["skills"]] == ["echo", "secret"]
