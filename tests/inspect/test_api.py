"""The API the page calls, spoken to directly: cards of every dialect, the wire log, bad
input answered 400 with what is wrong, the agent's errors passed on as it gave them."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.inspect.conftest import API_KEY, BEARER, PASSWORD, TOKEN, Inspector


@pytest.fixture
def api(inspector: Inspector) -> Iterator[httpx.Client]:
    cookies = {f"parley-inspect-{inspector.port}": TOKEN}
    with httpx.Client(base_url=inspector.base, cookies=cookies, timeout=30) as client:
        yield client


def lines(answer: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line) for line in answer.text.splitlines()]


def test_the_card_gives_every_interface_and_its_signature(api: httpx.Client, agent: str) -> None:
    card = api.post("/api/card", json={"url": agent}).json()
    assert card["card"]["name"] == "parley demo agent"
    assert card["signature"]["status"] == "verified"
    assert card["raw"]["signatures"]  # the JSON as received, signatures and all
    offered = {(o["protocol"], o["transport"]) for o in card["options"]}
    assert offered == {(v, t) for v in ("1.0", "0.3") for t in ("JSONRPC", "GRPC", "HTTP+JSON")}


def test_the_card_checks_of_parley_check_run_on_the_agent(api: httpx.Client, agent: str) -> None:
    card = api.post("/api/card", json={"url": agent}).json()
    report = api.post("/api/checks", json={"id": card["id"]}).json()
    verdicts = {(r["id"], r["version"], r["binding"]): r["status"] for r in report["results"]}
    assert {r["area"] for r in report["results"]} == {"card"}
    assert verdicts[("card.signatures", None, None)] == "pass"
    assert verdicts[("card.interface-answers", "1.0", "GRPC")] == "pass"
    assert report["counts"]  # and what failed, if anything, is in the results


def test_a_2025_early_card_is_spoken_to_in_its_dialect(api: httpx.Client, agent: str) -> None:
    card = api.post("/api/card", json={"url": agent, "protocol": "2025-early"}).json()
    assert [o["protocol"] for o in card["options"]] == ["2025-early"]
    connected = api.post("/api/connect", json={"id": card["id"], "protocol": "2025-early"})
    assert connected.json()["interface"]["protocol"] == "2025-early"
    sent = api.post("/api/send", json={"id": card["id"], "text": "tell me a joke"})
    assert lines(sent)[-1]["type"] == "end"


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
def test_the_wire_log_holds_each_request_and_event(
    api: httpx.Client, agent: str, binding: str
) -> None:
    card = api.post("/api/card", json={"url": agent}).json()
    api.post("/api/connect", json={"id": card["id"], "protocol": "0.3", "transport": binding})
    sent = lines(api.post("/api/send", json={"id": card["id"], "text": "tell me a joke"}))
    assert [line["type"] for line in sent] == ["event", "event", "event", "end"]
    assert [line["seq"] for line in sent[:3]] == [1, 2, 3]
    with api.stream("GET", f"/api/feed/{card['id']}") as feed:
        entries = []
        for line in feed.iter_lines():
            if line.startswith("data: "):
                entries.append(json.loads(line.removeprefix("data: ")))
            if len([e for e in entries if e["kind"] == "event"]) == 3:
                break
    sending = [e for e in entries if e["kind"] == "request"][-1]
    events = [e for e in entries if e["kind"] == "event"]
    assert all(event["of"] == sending["n"] for event in events)
    if binding == "GRPC":
        # the protobuf messages as sent and received, in protobuf's JSON mapping
        assert sending["method"] == "/a2a.v1.A2AService/SendStreamingMessage"
        assert '"text": "tell me a joke"' in sending["body"]
        assert "TASK_STATE_COMPLETED" in events[-1]["body"]
    else:
        assert json.loads(sending["body"])  # the bytes as sent
        assert sending["curl"].startswith("curl -N -H")
        assert events[0]["body"].startswith("id: 1\ndata: ")


def test_bad_input_is_answered_400_saying_what_is_wrong(api: httpx.Client, agent: str) -> None:
    refused = {
        "/api/card": ({"url": "ftp://x"}, "must start with http:// or https://"),
        "/api/checks": ({"url": "http://[::1"}, "id is required"),
        "/api/connect": ({"id": "nope"}, "no connection nope"),
        "/api/send": ({}, "id is required"),
    }
    for path, (body, reason) in refused.items():
        answer = api.post(path, json=body)
        assert answer.status_code in (400, 404)
        assert reason in answer.json()["error"]["message"]
    assert api.post("/api/card", content=b"{").json()["error"]["message"] == "the body is not JSON"
    not_a_url = api.post("/api/card", json={"url": "http://[bad"})
    assert not_a_url.status_code == 400
    assert "http://[bad is not a URL" in not_a_url.json()["error"]["message"]
    card = api.post("/api/card", json={"url": agent}).json()
    unconnected = api.post("/api/send", json={"id": card["id"], "text": "hi"})
    assert unconnected.status_code == 400
    assert "not connected" in unconnected.json()["error"]["message"]
    api.post("/api/connect", json={"id": card["id"]})
    nameless = api.post("/api/send", json={"id": card["id"], "files": [{"bytes": "", "name": 1}]})
    assert nameless.json()["error"]["message"] == "a file's name and mimeType must be strings"
    empty = api.post("/api/send", json={"id": card["id"], "text": "", "files": []})
    assert empty.json()["error"]["message"] == "the message is empty: give text or a file"


def feed(
    api: httpx.Client, connection_id: str, until: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """The connection's wire log, up to the first entry ``until`` holds for."""
    entries = []
    with api.stream("GET", f"/api/feed/{connection_id}") as answer:
        for line in answer.iter_lines():
            if line.startswith("data: "):
                entries.append(json.loads(line.removeprefix("data: ")))
                if until(entries[-1]):
                    return entries
    raise AssertionError("the feed ended before the entry waited for")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
def test_the_agents_error_is_passed_on_as_it_gave_it(
    api: httpx.Client, agent: str, binding: str
) -> None:
    card = api.post("/api/card", json={"url": agent}).json()
    api.post("/api/connect", json={"id": card["id"], "protocol": "1.0", "transport": binding})
    cancelled = api.post("/api/cancel", json={"id": card["id"], "taskId": "no-such-task"}).json()
    assert cancelled["error"]["type"] == "TaskNotFoundError"
    assert cancelled["error"]["code"] == -32001
    assert "no-such-task" in cancelled["error"]["message"]
    if binding == "GRPC":  # the status and trailers as received
        failure = feed(api, card["id"], until=lambda entry: entry["kind"] == "failure")[-1]
        assert failure["error"].startswith("NOT_FOUND: ")
        assert '"code":-32001' in failure["headers"]["a2a-error-bin"]


def test_an_agent_that_cannot_be_reached_is_said_so(api: httpx.Client) -> None:
    card = api.post("/api/card", json={"url": "http://127.0.0.1:9"}).json()
    assert card["error"]["type"] == "AgentUnreachableError"
    assert card["id"]  # its wire log shows the attempt


def test_without_streaming_a_message_is_sent_and_its_task_comes_back(
    api: httpx.Client, agent: str
) -> None:
    card = api.post("/api/card", json={"url": agent}).json()
    api.post("/api/connect", json={"id": card["id"], "protocol": "1.0", "transport": "HTTP+JSON"})
    sent = lines(
        api.post("/api/send", json={"id": card["id"], "text": "tell me a joke", "stream": False})
    )
    assert [line["type"] for line in sent] == ["event", "end"]
    task = sent[0]["event"]
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    # entries 1-6 fetched the card and its keys
    entries = feed(api, card["id"], until=lambda entry: entry["kind"] == "body" and entry["n"] > 6)
    sending = [e for e in entries if e["kind"] == "request"][-1]
    assert sending["url"].endswith("/message:send")
    assert json.loads(entries[-1]["body"])["task"]["id"] == task["id"]  # v1.0's answer


def test_copy_as_curl_sends_the_same_request(api: httpx.Client, agent: str) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("no curl on this machine to run the command with")
    card = api.post("/api/card", json={"url": agent}).json()
    api.post("/api/connect", json={"id": card["id"], "protocol": "0.3", "transport": "JSONRPC"})
    api.post("/api/send", json={"id": card["id"], "text": "echo me", "stream": False})
    # entries 1-6 fetched the card and its keys
    entries = feed(api, card["id"], until=lambda entry: entry["kind"] == "body" and entry["n"] > 6)
    command = [e for e in entries if e["kind"] == "request"][-1]["curl"]
    assert command.startswith("curl -H ")
    ran = subprocess.run(shlex.split(command), capture_output=True, timeout=30, check=True)
    answer = json.loads(ran.stdout)
    assert answer["result"]["kind"] == "task"
    assert answer["result"]["artifacts"][0]["parts"][0]["text"] == "echo me"


@pytest.mark.parametrize(
    ("scheme", "credential"),
    [("apiKey", API_KEY), ("basic", f"tester:{PASSWORD}"), ("bearer", BEARER)],
)
def test_credentials_go_as_the_cards_scheme_says(
    api: httpx.Client, guarded_agent: str, scheme: str, credential: str
) -> None:
    card = api.post("/api/card", json={"url": guarded_agent}).json()
    asked = {s["name"]: s for s in card["schemes"]}
    assert {name: s["kind"] for name, s in asked.items()} == {
        "apiKey": "apiKey",
        "basic": "basic",
        "bearer": "bearer",
    }
    assert {s["asked"] for s in asked.values()} == {"one of"}  # any one of them will do
    api.post("/api/connect", json={"id": card["id"]})
    refused = lines(api.post("/api/send", json={"id": card["id"], "text": "hi"}))
    assert refused[0]["error"]["type"] == "UnauthenticatedError"
    api.post("/api/connect", json={"id": card["id"], "credentials": {scheme: credential}})
    sent = lines(api.post("/api/send", json={"id": card["id"], "text": "hi"}))
    assert sent[-2]["event"]["status"]["state"] == "completed"


def test_resuming_a_task_that_ended_gives_the_refusal_then_the_task(
    api: httpx.Client, agent: str
) -> None:
    card = api.post("/api/card", json={"url": agent}).json()
    api.post("/api/connect", json={"id": card["id"], "protocol": "1.0", "transport": "JSONRPC"})
    sent = lines(api.post("/api/send", json={"id": card["id"], "text": "tell me a joke"}))
    task_id = sent[0]["event"]["id"]
    resumed = lines(api.post("/api/resubscribe", json={"id": card["id"], "taskId": task_id}))
    assert [line["type"] for line in resumed] == ["error", "event", "end"]
    assert resumed[0]["error"]["type"] == "UnsupportedOperationError"  # v1.0.1 §3.1.6
    assert resumed[1]["event"]["status"]["state"] == "completed"
