"""The official SDK's client (a2a-sdk, its ClientFactory) against a parley server.

One run of ``peers/sdk_client.py`` per binding plays every scenario; each test below
checks one of them. parley's app serves all three bindings and lists them in the card's
``additionalInterfaces``; the peer lets the SDK's ``ClientFactory`` pick the one it is
told to support, as its users do. Where a result can be compared whole, it is: what the
SDK's client parsed, dumped back to wire JSON, must equal parley's own wire JSON for the
same object, so a field parley misnames or misplaces (which the SDK would drop or
refuse) fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.protocol import (
    A2AError,
    AuthenticatedExtendedCardNotConfiguredError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from tests.interop.agents import interop_app
from tests.interop.sdk import run_peer
from tests.servers import running

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
PROTO_BINDINGS = {"HTTP+JSON", "GRPC"}  # the SDK reads these through its protobuf types


class Run:
    """The peer's results by scenario, the binding they came over, and the parley server."""

    def __init__(self, url: str, binding: str, lines: list[dict[str, Any]]) -> None:
        self.url = url
        self.binding = binding
        self.results = {line["scenario"]: line for line in lines}

    def __getitem__(self, scenario: str) -> dict[str, Any]:
        assert scenario in self.results, f"the peer did not report {scenario!r}"
        return self.results[scenario]

    def task(self, task_id: str) -> dict[str, Any]:
        """The task as parley itself puts it on the wire (tasks/get over raw JSON-RPC)."""
        request = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task_id}}
        result: dict[str, Any] = httpx.post(self.url, json=request).json()["result"]
        return result

    def view(self, value: Any) -> Any:
        """``value`` as the SDK's client can see it over this binding (itself on JSON-RPC)."""
        return proto_view(value) if self.binding in PROTO_BINDINGS else value


def proto_view(value: Any) -> Any:
    """What survives the SDK's protobuf conversion, on either side of a comparison.

    proto3 strings, maps and lists have no presence, so the SDK's ``FromProto`` reads an
    absent one as ``""``, ``{}``, ``[]``: those are dropped. Two losses are the SDK's
    own (see docs/interop.md): ``FromProto.task_status`` drops ``status.timestamp``, and
    turns an absent ``status.update`` into an empty agent message (``messageId: ""``, no
    parts), which its task manager then also moves into ``history``; both are dropped.
    """
    if isinstance(value, dict):
        if value.get("kind") == "message" and not value.get("messageId") and not value.get("parts"):
            return None
        kept = {key: proto_view(item) for key, item in value.items() if key != "timestamp"}
        return {key: item for key, item in kept.items() if item not in ("", {}, [], None)}
    if isinstance(value, list):
        return [item for item in (proto_view(v) for v in value) if item is not None]
    return value


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
        yield Run(url, transport, lines)


def texts(artifact: dict[str, Any]) -> str:
    return "".join(part["text"] for part in artifact["parts"])


def test_card_discovery_gives_the_sdk_the_whole_card(run: Run) -> None:
    """Spec 5.3: the card at /.well-known/agent-card.json, every v0.3 field understood
    (v1.0's ``supportedInterfaces`` and ``capabilities.extendedAgentCard`` are unknown to
    a 0.3 SDK, which drops them: the card stays a valid v0.3 card)."""
    card = run["card"]["card"]
    served = httpx.get(f"{run.url}/.well-known/agent-card.json").json()
    assert served.pop("supportedInterfaces")
    served["capabilities"].pop("extendedAgentCard", None)
    assert card == served
    assert card["url"] == f"{run.url}/"
    assert card["protocolVersion"] == "0.3.0"
    # spec 3.4.2 / 5.6.2: every binding served is declared, so the SDK can pick any
    assert {i["transport"] for i in card["additionalInterfaces"]} == set(BINDINGS)


def test_send_answers_with_the_task(run: Run) -> None:
    """Spec 7.1: message/send answers with the Task; the SDK parses every field of it."""
    task = run["send_task"]["result"]
    assert run.view(task) == run.view(run.task(task["id"]))
    assert task["status"]["state"] == "completed"
    assert texts(task["artifacts"][0]) == "echo: hello interop"
    # Named fields too: equality alone would miss a field lost on both sides.
    assert task["artifacts"][0]["name"] == "response"
    assert task["artifacts"][0]["artifactId"]
    assert run.task(task["id"])["status"]["timestamp"]
    if run.binding in PROTO_BINDINGS:
        # a2a-sdk's FromProto.task_status drops the timestamp parley sends (spec 6.2)
        assert "timestamp" not in task["status"]
    else:
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
    """Spec 7.2: Task first, then status and artifact updates, the last one final. An
    ``@agent`` task is created ``working`` (spec 6.3), so no status update precedes the
    artifacts."""
    events = run["stream"]["events"]
    assert events[0]["task"]["status"]["state"] == "working"
    updates = [event["update"] for event in events[1:]]
    assert [u["kind"] for u in updates] == [
        "artifact-update",
        "artifact-update",
        "artifact-update",
        "status-update",
    ]
    # absent and false are one value in proto3; the first chunk does not append
    assert [bool(u.get("append")) for u in updates[0:3]] == [False, True, True]
    assert updates[-1]["status"]["state"] == "completed"
    assert updates[-1]["final"] is True
    rebuilt = run["stream"]["task"]
    assert run.view(rebuilt) == run.view(run.task(rebuilt["id"]))
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
    assert run.view(full) == run.view(run.task(full["id"]))
    assert len(full["history"]) >= 3
    assert run["get_history_1"]["result"]["history"] == full["history"][-1:]
    assert run["get_history_1"]["result"]["history"][0]["parts"][0]["text"] == "more"
    zero = run["get_history_0"]["result"].get("history", [])
    if run.binding == "GRPC":
        # a2a.proto GetTaskRequest.history_length is a plain int32: "if 0, the history
        # will be unlimited", so the SDK's 0 asks for all of it
        assert zero == full["history"]
    else:
        assert zero == []


def test_cancel_answers_with_the_canceled_task(run: Run) -> None:
    """Spec 7.4."""
    assert run["wait_started"]["result"]["status"]["state"] in {"submitted", "working"}
    canceled = run["cancel"]["result"]
    assert canceled["id"] == run["wait_started"]["result"]["id"]
    assert canceled["status"]["state"] == "canceled"
    assert run.view(run["get_canceled"]["result"]) == run.view(run.task(canceled["id"]))
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
    assert run.view(events[0]["task"]) == run.view(run.task(run["resubscribe"]["task_id"]))


ERRORS: dict[str, type[A2AError]] = {
    "error_task_not_found": TaskNotFoundError,
    "error_cancel_not_found": TaskNotFoundError,
    "error_not_cancelable": TaskNotCancelableError,
    "push_set": PushNotificationNotSupportedError,
    "push_get": PushNotificationNotSupportedError,
    "error_history_length": InvalidParamsError,
    "error_terminal_task": InvalidParamsError,
    # before any event: JSON-RPC sends the error as the stream's one SSE event (spec 3.3.1)
    "error_resubscribe_not_found": TaskNotFoundError,
    "error_stream_terminal_task": InvalidParamsError,
}
RAW_ERRORS: dict[str, type[A2AError]] = {
    "push_list": PushNotificationNotSupportedError,
    "push_delete": PushNotificationNotSupportedError,
    "error_unsupported_operation": UnsupportedOperationError,
    "error_extended_not_configured": AuthenticatedExtendedCardNotConfiguredError,
    "error_method_not_found": MethodNotFoundError,
    "error_invalid_params": InvalidParamsError,
    "error_parse": JSONParseError,
}


@pytest.mark.parametrize("scenario", sorted(ERRORS))
def test_every_error_reaches_the_sdk_client_as_its_error(run: Run, scenario: str) -> None:
    """Spec 8.1 / 8.2, 3.4.1: each A2A error arrives as the SDK client's error for it.

    What "its error" is depends on the SDK's transport. JSON-RPC: ``A2AClientJSONRPCError``
    with the code (a2a-sdk 0.3.26 parses every error object into its generic
    ``JSONRPCError``, so its users tell errors apart by ``code``). HTTP+JSON: its
    ``A2AClientHTTPError`` with the HTTP status of the error (spec 3.2.3), the body unread.
    gRPC: the ``grpc.aio.AioRpcError`` it lets through, with the error's status code
    (spec 3.2.2) and details ``"<ErrorName>: <message>"``.
    """
    error = ERRORS[scenario]
    result = run[scenario]
    if run.binding == "JSONRPC":
        assert result["raised"] == "A2AClientJSONRPCError", result
        assert result["code"] == error.code
        assert result["message"]
    elif run.binding == "HTTP+JSON" and scenario == "error_resubscribe_not_found":
        # a2a-sdk's RestTransport.resubscribe never looks at the status: parley's 404 with
        # the JSON error body (spec 3.2.3) becomes "Invalid SSE response", status 400
        assert result["raised"] == "A2AClientHTTPError", result
        assert result["status"] == 400
        assert "text/event-stream" in result["message"]
    elif run.binding == "HTTP+JSON":
        assert result["raised"] == "A2AClientHTTPError", result
        assert result["status"] == error.http_status
    else:
        assert result["raised"] == "AioRpcError", result
        assert result["grpc_status"] == error.grpc_status
        assert result["message"].startswith(f"{error.__name__}: ")


@pytest.mark.parametrize("scenario", sorted(RAW_ERRORS))
def test_errors_outside_the_client_api(run: Run, scenario: str) -> None:
    """Errors the SDK's Client API cannot provoke, sent beside it on the same binding.

    JSON-RPC: parsed by the SDK's own response models (spec 6.11, 8). HTTP+JSON: the
    status and parley's one error body (spec 3.2.3). gRPC: through the SDK's generated
    ``A2AServiceStub`` (spec 3.2.2).
    """
    error = RAW_ERRORS[scenario]
    result = run[scenario]
    if run.binding == "JSONRPC":
        assert result["raised"] == "A2AClientJSONRPCError", result
        assert result["code"] == error.code
        assert result["status"] == 200
        expected_id = None if scenario == "error_parse" else result["id"]
        assert result["id"] == expected_id
    elif run.binding == "HTTP+JSON":
        assert result["status"] == error.http_status, result
        assert result["content_type"] == "application/json"
        assert result["body"]["code"] == error.code
        assert result["body"]["message"]
    else:
        assert result["raised"] == "AioRpcError", result
        assert result["grpc_status"] == error.grpc_status
        if scenario != "error_method_not_found":  # grpc itself answers an unknown method
            assert result["message"].startswith(f"{error.__name__}: ")


@pytest.mark.parametrize("run", ["JSONRPC"], indirect=True)  # the others have no envelope
def test_an_invalid_jsonrpc_request(run: Run) -> None:
    """Spec 8.1: -32600 for valid JSON that is no JSON-RPC request (JSON-RPC only)."""
    result = run["error_invalid_request"]
    assert result["raised"] == "A2AClientJSONRPCError", result
    assert result["code"] == InvalidRequestError.code
    assert result["status"] == 200
    assert result["id"] == 7  # a valid id is echoed even when the rest is not


def test_the_sdk_client_fetches_the_extended_card(run: Run) -> None:
    """Spec 7.10: supportsAuthenticatedExtendedCard makes the SDK call
    agent/getAuthenticatedExtendedCard, and it gets the extended card."""
    card = run["extended_card"]["card"]
    assert card["name"] == "parley interop agent (extended)"
    assert [skill["id"] for skill in card["skills"]] == ["echo", "secret"]
