"""The official SDK's client (a2a-sdk 0.3.26) configuring push on a parley server that
declares it, over each binding (spec 7.5-7.8, 9.5): set and get with its Client, list and
delete the way each binding allows, the errors a config meets, and a message sent with
the SDK's ``push_notification_configs`` whose updates reach a webhook, verified."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley.client import AgentKeys
from parley.protocol import InvalidParamsError, TaskNotFoundError
from parley.types import TaskState
from tests.interop.agents import interop_app
from tests.interop.sdk import run_peer
from tests.push.webhook import Webhook, webhook
from tests.servers import running

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]


class Run:
    def __init__(self, binding: str, lines: list[dict[str, Any]], hook: Webhook, url: str):
        self.binding = binding
        self.results = {line["scenario"]: line for line in lines}
        self.hook = hook
        self.hook_url = url

    def __getitem__(self, scenario: str) -> dict[str, Any]:
        assert scenario in self.results, f"the peer did not report {scenario!r}"
        return self.results[scenario]


@pytest.fixture(scope="module", params=BINDINGS)
def run(request: pytest.FixtureRequest, sdk: Path) -> Iterator[Run]:
    with running(interop_app(push=True)) as url, webhook(AgentKeys.of_agent(url)) as (hook, at):
        lines = run_peer(
            sdk, "sdk_push_client.py", "--url", url, "--hook", at, "--transport", request.param
        )
        yield Run(request.param, lines, hook, at)


def _config(run: Run) -> dict[str, Any]:
    return {"id": "c1", "url": run.hook_url, "token": "sdk-token"}


def test_set_and_get_through_the_sdk_client(run: Run) -> None:
    """Spec 7.5, 7.6: what the SDK sets it gets back, whole."""
    for scenario in ("set", "get"):
        result = run[scenario]["result"]
        assert result["pushNotificationConfig"] == _config(run), scenario
        assert result["taskId"]


def test_list_and_delete_on_each_binding(run: Run) -> None:
    """Spec 7.7, 7.8: the config is listed, deleted, then gone."""
    listed, after = run["list"], run["list_after_delete"]
    if run.binding == "JSONRPC":
        [entry] = listed["result"]["result"]
        assert entry["pushNotificationConfig"] == _config(run)
        assert "error" not in run["delete"]["result"]  # null result (dropped by the dump)
        assert after["result"]["result"] == []
    elif run.binding == "HTTP+JSON":
        assert listed["status"] == 200
        [entry] = listed["result"]["configs"] if "configs" in listed["result"] else listed["result"]
        assert entry["pushNotificationConfig"]["url"] == run.hook_url
        assert run["delete"]["status"] == 200
        assert after["status"] == 200
        assert after["result"] in ([], {}, {"configs": []})
    else:
        [entry] = listed["result"]["configs"]
        assert entry["name"].endswith("/pushNotificationConfigs/c1")
        assert entry["pushNotificationConfig"]["url"] == run.hook_url
        assert after["result"] == {}


@pytest.mark.parametrize(
    ("scenario", "error"),
    [("set_refused", InvalidParamsError), ("set_unknown_task", TaskNotFoundError)],
)
def test_config_errors_reach_the_sdk_as_its_errors(
    run: Run, scenario: str, error: type[InvalidParamsError | TaskNotFoundError]
) -> None:
    """Spec 8.2, 9 (webhook URL validation): -32602 for a refused URL, -32001 for an
    unknown task, as each SDK transport surfaces them."""
    result = run[scenario]
    if run.binding == "JSONRPC":
        assert (result["raised"], result["code"]) == ("A2AClientJSONRPCError", error.code)
    elif run.binding == "HTTP+JSON":
        assert (result["raised"], result["status"]) == ("A2AClientHTTPError", error.http_status)
    else:
        assert (result["raised"], result["grpc_status"]) == ("AioRpcError", error.grpc_status)
    if scenario == "set_refused" and run.binding != "HTTP+JSON":  # its REST reads no body
        assert "169.254.169.254" in result["message"]


async def test_a_send_with_the_sdks_push_config_is_delivered(run: Run) -> None:
    """Spec 9.5: the SDK's ClientConfig.push_notification_configs rides on message/send;
    every update of the task reaches the webhook, signed, in order."""
    task = run["send_with_push"]["result"]
    assert task["status"]["state"] == "completed"
    await run.hook.wait_for(3)
    states = [t.status.state for t in run.hook.tasks if t.id == task["id"]]
    assert states == [  # the task (created working by @agent), the artifact, completed
        TaskState.working,
        TaskState.working,
        TaskState.completed,
    ]
