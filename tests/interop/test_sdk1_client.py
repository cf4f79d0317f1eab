"""a2a-sdk 1.3's client, default settings (A2A 1.0 first), against a parley server over
JSON-RPC, HTTP+JSON and gRPC: it must find v1.0 in the card's ``supportedInterfaces`` and
play the scenario table in v1.0 (v1.0.1 §3.6, §8.3.2). Its answers are checked here;
``tests/conformance.py`` checks parley's v1.0 wire on every call as it leaves.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.interop.agents import interop_app
from tests.interop.sdk import run_peer
from tests.servers import running

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
V1_TRANSPORTS = {
    "JSONRPC": "JsonRpcTransport",
    "HTTP+JSON": "RestTransport",
    "GRPC": "GrpcTransport",
}


class Run:
    def __init__(self, binding: str, lines: list[dict[str, Any]]) -> None:
        self.binding = binding
        self.results = {line["scenario"]: line for line in lines}

    def __getitem__(self, scenario: str) -> dict[str, Any]:
        assert scenario in self.results, f"the peer did not report {scenario!r}"
        return self.results[scenario]


@pytest.fixture(scope="module", params=BINDINGS)
def run(request: pytest.FixtureRequest, sdk1: Path) -> Iterator[Run]:
    with running(interop_app()) as url:
        lines = run_peer(sdk1, "sdk1_client.py", "--url", url, "--transport", request.param)
        yield Run(request.param, lines)


def texts(task: dict[str, Any]) -> str:
    return "".join(part["text"] for a in task.get("artifacts", ()) for part in a["parts"])


def test_the_sdk_picks_v1_from_the_card(run: Run) -> None:
    """v1.0.1 §8.3.2: the card lists 1.0 beside 0.3; the SDK takes its 1.0 transport, not
    its 0.3 compatibility layer (``Compat...Transport``)."""
    assert run["card"]["transport"] == V1_TRANSPORTS[run.binding]


def test_send_message(run: Run) -> None:
    """v1.0.1 §3.1.1: SendMessage returns the finished task, enums as TASK_STATE_*."""
    assert run["send"]["state"] == "TASK_STATE_COMPLETED"
    assert texts(run["send"]["task"]) == "echo: hello"
    assert run["send"]["task"]["history"][0]["role"] == "ROLE_USER"


def test_streaming(run: Run) -> None:
    """v1.0.1 §3.1.2, §4.2: the task, then status and artifact updates as a one-of."""
    kinds = run["stream"]["kinds"]
    assert kinds[0] == "task"
    assert kinds.count("artifactUpdate") == 3
    assert kinds[-1] == "statusUpdate"
    assert run["stream"]["events"][-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_get_task_with_history_length(run: Run) -> None:
    """v1.0.1 §3.1.3, §3.2.4: GetTask with historyLength 1."""
    task = run["get"]["task"]
    assert task["id"] == run["send"]["task"]["id"]
    assert len(task["history"]) == 1


def test_multi_turn(run: Run) -> None:
    """v1.0.1 §3.4: input required, then the next message on the same task completes it."""
    assert run["multi_turn"]["first"] == "TASK_STATE_INPUT_REQUIRED"
    assert run["multi_turn"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert texts(run["multi_turn"]["task"]) == "thanks for: more"


def test_cancel(run: Run) -> None:
    """v1.0.1 §3.1.5: a running task is canceled; §3.3.1: canceling it again has the same
    effect (parley answers the canceled task again, no error)."""
    assert run["cancel"]["state"] == "TASK_STATE_CANCELED"
    assert run["cancel"]["again"] == "none"


def test_errors_reach_the_sdk_as_their_class(run: Run) -> None:
    """v1.0.1 §3.3.2, §9.5, §10.6, §11.6: TaskNotFound on every binding."""
    assert run["errors"]["unknown_task"] == "TaskNotFoundError"


def test_list_tasks(run: Run) -> None:
    """v1.0.1 §3.1.4: pages of two, newest first, a cursor to the next page."""
    page, following = run["list"]["page"], run["list"]["following"]
    assert len(page["tasks"]) == 2
    assert page["nextPageToken"]
    assert page["pageSize"] == 2
    assert page["totalSize"] == 4  # hello, stream, ask (and more), wait
    assert not {t["id"] for t in page["tasks"]} & {t["id"] for t in following["tasks"]}
    assert all("artifacts" not in task for task in page["tasks"])  # includeArtifacts false


def test_extended_card(run: Run) -> None:
    """v1.0.1 §3.1.11: GetExtendedAgentCard in v1.0 shape."""
    card = run["extended_card"]["card"]
    assert card["name"] == "parley interop agent (extended)"
    versions = {i["protocolVersion"] for i in card["supportedInterfaces"]}
    assert "0.3" in versions


def test_push_refused_when_not_declared(run: Run) -> None:
    """v1.0.1 §3.3.2: push config calls on an agent without push: the SDK's class."""
    assert run["push"]["create"] == "PushNotificationNotSupportedError"
    assert run["push"]["get_unknown"] == "PushNotificationNotSupportedError"
