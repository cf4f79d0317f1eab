"""parley against an agent built with the official JavaScript SDK, ``@a2a-js/sdk`` 1.3
(``js/echo_server.mjs``: A2A 1.0 on JSON-RPC and HTTP+JSON, streaming and push on):
parley's client talks to it, and ``parley check`` finds its deviations from the
specification (docs/interop.md lists them), and nothing it does right."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from parley import check
from parley.check import Status
from parley.client import connect
from parley.types import Task, TaskArtifactUpdateEvent, TaskState, TextPart
from tests.interop.js import serving_js_agent

BINDINGS = ["JSONRPC", "HTTP+JSON"]

JS_DEVIATIONS: dict[tuple[str, str], str] = {
    ("envelope.invalid-request", "JSONRPC"): "got error -32602",
    ("push.delete-answer", "HTTP+JSON"): "HTTP 204 with no JSON body",
}
"""@a2a-js/sdk 1.3: each check it fails, on which binding, and a piece of the reason."""


@pytest.fixture(scope="module")
def agent(js_sdk: Path) -> Iterator[str]:
    with serving_js_agent(js_sdk) as served:
        yield f"http://127.0.0.1:{served.port}"


def _text(task: Task) -> str:
    return "".join(
        part.text for a in task.artifacts or () for part in a.parts if isinstance(part, TextPart)
    )


@pytest.mark.parametrize("binding", BINDINGS)
async def test_parley_sends_a_message_and_reads_the_echo(agent: str, binding: str) -> None:
    async with connect(agent, transports=[binding]) as client:
        assert client.transport.interface.protocol == "1.0"  # type: ignore[attr-defined]
        task = await client.send_message("hello from parley")
        assert isinstance(task, Task)
        assert task.status.state is TaskState.completed
        assert _text(task) == "hello from parley"
        events = [event async for event in client.stream_message("streamed")]
    assert isinstance(events[0], Task)
    (artifact,) = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert [p.text for p in artifact.artifact.parts if isinstance(p, TextPart)] == ["streamed"]
    assert events[-1].status.state is TaskState.completed  # type: ignore[union-attr]


async def test_the_checks_find_what_the_js_sdk_does_differently(agent: str) -> None:
    report = await check.run(agent, webhook="http://127.0.0.1:9/", receiver="127.0.0.1:0")
    assert {(s.version, s.binding) for s in report.surfaces} == {
        ("1.0", "JSONRPC"), ("1.0", "HTTP+JSON"),
    }  # fmt: skip
    found = {
        (r.check.id, r.binding or "agent"): r.reason
        for r in report.results
        if r.status is Status.failed
    }
    assert set(found) == set(JS_DEVIATIONS), check.text(report)
    for where, why in JS_DEVIATIONS.items():
        assert why in found[where], (where, found[where])
    passed = {r.check.id for r in report.results if r.status is Status.passed}
    assert {"tasks.send", "stream.events", "push.configs", "push.delivery"} <= passed
