"""a2a-sdk 1.3's client (A2A 1.0) configuring push on a parley server that declares it,
over each binding (v1.0.1 §3.1.7-3.1.10, §4.3): create, get, list and delete as its
Client does them, "task not found" for another task, and a message sent with a
``taskPushNotificationConfig`` whose updates reach a webhook in v1.0's shape."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.interop.agents import interop_app
from tests.interop.sdk import run_peer
from tests.push.webhook import Webhook, webhook
from tests.servers import running

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
COMPLETED = "TASK_STATE_COMPLETED"


class Run:
    def __init__(self, lines: list[dict[str, Any]], hook: Webhook, url: str) -> None:
        self.results = {line["scenario"]: line for line in lines}
        self.hook = hook
        self.hook_url = url

    def __getitem__(self, scenario: str) -> dict[str, Any]:
        assert scenario in self.results, f"the peer did not report {scenario!r}"
        return self.results[scenario]


@pytest.fixture(scope="module", params=BINDINGS)
def run(request: pytest.FixtureRequest, sdk1: Path) -> Iterator[Run]:
    with running(interop_app(push=True)) as url, webhook() as (hook, at):
        lines = run_peer(
            sdk1, "sdk1_push_client.py", "--url", url, "--hook", at, "--transport", request.param
        )
        yield Run(lines, hook, at)


def test_create_get_list_delete(run: Run) -> None:
    """§3.1.7-3.1.10: what the SDK creates it gets and lists back; deleted, it is gone."""
    for config_id in ("c1", "c2"):
        created = run[f"create_{config_id}"]["config"]
        assert (created["id"], created["url"], created["token"]) == (config_id, run.hook_url, "tok")
    got = run["get"]["config"]
    assert (got["id"], got["url"], got["taskId"]) == (
        "c1",
        run.hook_url,
        run["create_c1"]["config"]["taskId"],
    )
    listed = run["list"]["configs"]["configs"]
    assert sorted(config["id"] for config in listed) == ["c1", "c2"]
    after = run["delete"]["configs"]["configs"]
    assert [config["id"] for config in after] == ["c2"]
    assert run["delete"]["get_deleted"] != "none"


def test_an_unknown_task_is_not_found(run: Run) -> None:
    assert run["unknown_task"]["list"] == "TaskNotFoundError"


async def test_a_send_with_a_config_is_delivered_in_v1_shape(run: Run) -> None:
    """§4.3: the config rides on SendMessage; each update reaches the webhook as a
    StreamResponse, with the config's token."""
    task = run["send_with_config"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    await run.hook.wait_for(2)
    for _ in range(600):  # the last update may still be on its way: 30 s at most
        bodies = [json.loads(r.body) for r in run.hook.received]
        mine = [b for b in bodies if task["id"] in json.dumps(b)]
        if mine and mine[-1].get("task", {}).get("status", {}).get("state") == COMPLETED:
            break
        await asyncio.sleep(0.05)
    assert mine, bodies
    assert all(set(b) <= {"task", "message", "statusUpdate", "artifactUpdate"} for b in mine)
    assert [b["task"]["status"]["state"] for b in mine][-1] == COMPLETED
    assert all(r.headers.get("x-a2a-notification-token") == "sent" for r in run.hook.received)
