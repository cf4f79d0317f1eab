"""message/stream, tasks/resubscribe and Last-Event-ID over real HTTP (spec 7.2, 7.9)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, MutableMapping
from typing import Any

import httpx
import pytest

from parley.server import A2AApp
from tests.server.agents import ScriptedAgent, scripted_app
from tests.server.rpc import body, result, send, sse, user_message
from tests.servers import running


@pytest.fixture
def served() -> Iterator[tuple[str, ScriptedAgent]]:
    app, agent = scripted_app()
    with running(app) as url:
        yield url, agent


@pytest.fixture
async def http(served: tuple[str, ScriptedAgent]) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served[0], timeout=30) as client:
        yield client


def stream_params(text: str, **fields: Any) -> dict[str, Any]:
    return {"message": user_message(text, **fields)}


async def test_stream_sends_every_event_in_order_with_sequence_ids(
    http: httpx.AsyncClient,
) -> None:
    """Spec 7.2: each SSE data is one JSON-RPC response; parley's SSE id is the sequence."""
    events = await sse(http, "message/stream", stream_params("chunks 3"), None)
    kinds = [answer["result"]["kind"] for _, answer in events]
    assert kinds == ["task", "status-update", *["artifact-update"] * 3, "status-update"]
    assert [event_id for event_id, _ in events] == [1, 2, 3, 4, 5, 6]
    assert all(answer["id"] == 1 for _, answer in events)
    final = events[-1][1]["result"]
    assert final["status"]["state"] == "completed"
    assert final["final"] is True


async def test_each_event_is_one_data_line(http: httpx.AsyncClient) -> None:
    """Spec 7.2: every event's data is one JSON-RPC response on one line."""
    request = body("message/stream", stream_params("chunks 2"))
    async with http.stream("POST", "/", json=request) as response:
        raw = b"".join([chunk async for chunk in response.aiter_bytes()])
    blocks = [block for block in raw.split(b"\n\n") if block]
    for block in blocks:
        id_line, data_line = block.split(b"\n")
        assert id_line.startswith(b"id: ")
        assert data_line.startswith(b"data: ")
        json.loads(data_line[6:])


V1_STREAM = {"message": {"messageId": "m-v1", "role": "ROLE_USER", "parts": [{"text": "chunks 2"}]}}


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [
        ("message/stream", stream_params("chunks 2"), None),  # v0.3: the log's wire JSON
        ("SendStreamingMessage", V1_STREAM, {"A2A-Version": "1.0"}),  # v1.0's fast path
        ("SendStreamingMessage", {**V1_STREAM, "tenant": "t"}, {"A2A-Version": "1.0"}),
    ],
)
async def test_every_event_answers_the_request_id_as_sent(
    http: httpx.AsyncClient, method: str, params: dict[str, Any], headers: dict[str, str] | None
) -> None:
    """Spec 7.2: each event is a JSON-RPC response with the request's id, whatever the id
    holds (a "%" in it is no format to the framing)."""
    request_id = "50%d of %s%%"
    request = body(method, params, request_id=request_id)
    async with http.stream("POST", "/", json=request, headers=headers) as response:
        raw = b"".join([chunk async for chunk in response.aiter_bytes()])
    answers = [json.loads(line[6:]) for line in raw.split(b"\n") if line.startswith(b"data: ")]
    assert len(answers) == 5  # the task, working, two chunks, completed
    assert all(answer["id"] == request_id and "result" in answer for answer in answers)


async def test_stream_of_a_direct_reply_is_one_message(http: httpx.AsyncClient) -> None:
    events = await sse(http, "message/stream", stream_params("reply hi"), None)
    assert [answer["result"]["kind"] for _, answer in events] == ["message"]


@pytest.fixture
def served_app() -> Iterator[tuple[str, A2AApp]]:
    app, _ = scripted_app()
    with running(app) as url:
        yield url, app


@pytest.mark.parametrize("again", ["message/stream", "message/send"])
async def test_a_streamed_direct_reply_answers_a_repeat_of_its_message(
    served_app: tuple[str, A2AApp], again: str
) -> None:
    """A message sent again (same messageId, same context) gets the first send's reply,
    after a ``message/stream`` as after a ``message/send``: the agent's direct reply is
    recorded, since its task, which never existed, is not there to ask."""
    url, app = served_app
    params = stream_params("reply hi", contextId="ctx-reply")
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        events = await sse(http, "message/stream", params)
        first = events[0][1]["result"]
        assert first["kind"] == "message"
        for _ in range(1000):  # the run over and gone: only the record is left
            if not app.handler.runs.registry:
                break
            await asyncio.sleep(0.01)
        assert not app.handler.runs.registry
        if again == "message/stream":
            repeated = (await sse(http, again, params))[0][1]["result"]
        else:
            repeated = await result(http, again, params)
    assert repeated == first


async def only_event(response: httpx.Response) -> dict[str, Any]:
    """The one SSE event of a stream answer, checked to be the whole body."""
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    blocks = [block for block in response.content.split(b"\n\n") if block.strip()]
    assert len(blocks) == 1, response.content
    assert blocks[0].startswith(b"data: ")
    event: dict[str, Any] = json.loads(blocks[0][6:])
    return event


async def test_stream_errors_before_start_are_one_sse_error_event(
    http: httpx.AsyncClient,
) -> None:
    """Spec 3.3.1 / 7: a streaming method's body is an SSE stream of JSON-RPC responses,
    so an error met before the first event is that stream's one event (HTTP 200)."""
    request = body("message/stream", stream_params("x", taskId="no"), request_id="s-1")
    event = await only_event(await http.post("/", json=request))
    assert event["id"] == "s-1"
    assert event["error"]["code"] == -32001
    assert "result" not in event


async def test_invalid_params_of_a_streaming_method_are_one_sse_error_event(
    http: httpx.AsyncClient,
) -> None:
    """The method is known to stream, so even a -32602 for its params comes as SSE."""
    request = body("message/stream", {"message": {"role": "user"}}, request_id=4)
    event = await only_event(await http.post("/", json=request))
    assert event["id"] == 4
    assert event["error"]["code"] == -32602


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"{not json", -32700),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "message/stream"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "message/teleport"}', -32601),
    ],
)
async def test_errors_before_the_method_is_known_are_plain_json(
    http: httpx.AsyncClient, content: bytes, code: int
) -> None:
    """With no known streaming method there is no stream to answer with (spec 8.1)."""
    response = await http.post("/", content=content, headers={"content-type": "application/json"})
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == code


async def test_errors_of_a_method_that_does_not_stream_stay_plain_json(
    http: httpx.AsyncClient,
) -> None:
    response = await http.post("/", json=body("message/send", stream_params("x", taskId="no")))
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == -32001


async def test_resubscribe_sends_the_task_then_live_events(
    http: httpx.AsyncClient, served: tuple[str, ScriptedAgent]
) -> None:
    """Spec 7.9: resubscribe to a running task: the current Task first, then what follows."""
    task = await send(http, "slow", configuration={"blocking": False})
    subscribed = asyncio.Event()
    reader = asyncio.create_task(
        sse(http, "tasks/resubscribe", {"id": task["id"]}, None, subscribed)
    )
    await subscribed.wait()  # the Task came: the reader follows the log
    served[1].release.set()
    events = await reader
    kinds = [answer["result"]["kind"] for _, answer in events]
    assert kinds[0] == "task"
    assert kinds[-1] == "status-update"
    assert events[-1][1]["result"]["status"]["state"] == "completed"
    ids = [event_id or 0 for event_id, _ in events]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


async def test_resubscribe_to_a_finished_task_sends_the_final_task(
    http: httpx.AsyncClient,
) -> None:
    task = await send(http, "echo x")
    events = await sse(http, "tasks/resubscribe", {"id": task["id"]}, None)
    assert len(events) == 1
    assert events[0][1]["result"] == task


async def test_resubscribe_unknown_task(http: httpx.AsyncClient) -> None:
    """Spec 7.9: -32001, as the one event of the stream (spec 3.3.1)."""
    response = await http.post("/", json=body("tasks/resubscribe", {"id": "nope"}))
    assert (await only_event(response))["error"]["code"] == -32001


async def test_last_event_id_resumes_with_no_gap_and_no_duplicate(
    http: httpx.AsyncClient, served: tuple[str, ScriptedAgent]
) -> None:
    """A dropped stream resumed with Last-Event-ID continues right after that event."""
    seen: list[tuple[int, dict[str, Any]]] = []
    request = body("message/stream", stream_params("chunks-wait 8"))
    async with http.stream("POST", "/", json=request) as response:
        event_id = 0
        async for line in response.aiter_lines():
            if line.startswith("id:"):
                event_id = int(line[3:])
            elif line.startswith("data:"):
                seen.append((event_id, json.loads(line[5:])))
                if len(seen) == 5:
                    break  # the connection drops here
    task_id = seen[0][1]["result"]["id"]
    resumed = asyncio.Event()
    reader = asyncio.create_task(
        sse(http, "tasks/resubscribe", {"id": task_id}, {"Last-Event-ID": "5"}, resumed)
    )
    await resumed.wait()  # event 6 came: the reader follows the log
    served[1].release.set()
    rest = await reader
    ids = [event_id for event_id, _ in seen] + [event_id for event_id, _ in rest]
    assert ids == list(range(1, len(ids) + 1))
    chunks = [
        a["result"]["artifact"]["parts"][0]["text"]
        for _, a in seen + rest
        if a["result"]["kind"] == "artifact-update"
    ]
    assert chunks == [f"{i}," for i in range(8)]
    assert rest[-1][1]["result"]["status"]["state"] == "completed"


async def test_a_stalled_reader_blocks_neither_the_agent_nor_other_readers(
    http: httpx.AsyncClient, served: tuple[str, ScriptedAgent]
) -> None:
    """3,000 artifact chunks; one reader stops after 10 events and never reads again; the
    agent still completes and another reader gets all 3,000, in order."""
    request = body("message/stream", stream_params("chunks-wait 3000"))
    async with http.stream("POST", "/", json=request) as stalled:
        lines = stalled.aiter_lines()
        first: dict[str, Any] | None = None
        count = 0
        async for line in lines:
            if line.startswith("data:"):
                count += 1
                first = first or json.loads(line[5:])
                if count == 10:
                    break  # stop reading, but keep the connection open
        assert first is not None
        task_id = first["result"]["id"]
        async with httpx.AsyncClient(base_url=served[0], timeout=60) as other:
            following = asyncio.Event()
            reader = asyncio.create_task(
                sse(other, "tasks/resubscribe", {"id": task_id}, {"Last-Event-ID": "0"}, following)
            )
            await following.wait()  # the replay began: the reader follows the log
            served[1].release.set()
            events = await asyncio.wait_for(reader, 60)
            done = await result(other, "tasks/get", {"id": task_id, "historyLength": 0})
    chunks = [
        a["result"]["artifact"]["parts"][0]["text"]
        for _, a in events
        if a["result"]["kind"] == "artifact-update"
    ]
    assert chunks == [f"{i}," for i in range(3000)]
    assert done["status"]["state"] == "completed"
    assert len(done["artifacts"][0]["parts"]) == 3000


async def test_streaming_refused_when_the_card_says_no() -> None:
    app: A2AApp
    app, _ = scripted_app(capabilities={"streaming": False})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as client:
        response = await client.post("/", json=body("message/stream", stream_params("x")))
    assert (await only_event(response))["error"]["code"] == -32004


class _GoingAway:
    """The server side of one HTTP request: the body, then a disconnect once the first
    SSE event has been sent (the client reads one event and goes away)."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.request = json.dumps(request).encode()
        self.body = b""
        self.first_event = asyncio.Event()
        self.asked = 0

    async def receive(self) -> dict[str, Any]:
        self.asked += 1
        if self.asked == 1:
            return {"type": "http.request", "body": self.request, "more_body": False}
        await self.first_event.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.body":
            self.body += message.get("body", b"")
            if b"data: " in self.body:
                self.first_event.set()


def _scope() -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"agent.test"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }


@pytest.mark.parametrize("method", ["message/stream", "tasks/resubscribe"])
async def test_a_client_that_goes_away_stops_its_stream_not_the_agent(method: str) -> None:
    """The stream of a task whose agent waits ends when its client disconnects (the
    reader is stopped, not left waiting for the next event); the agent goes on."""
    app, agent = scripted_app()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as client:
        task = await result(
            client,
            "message/send",
            {"message": user_message("slow"), "configuration": {"blocking": False}},
        )
        params = stream_params("slow") if method == "message/stream" else {"id": task["id"]}
        client_side = _GoingAway(body(method, params))
        # Returns (rather than waiting for the agent's next event) once the client is gone.
        await asyncio.wait_for(app(_scope(), client_side.receive, client_side.send), 30)
        assert client_side.body.startswith(b"id: ")
        assert not client_side.body.endswith(b'"final":true}\n\n')
        agent.release.set()
        for _ in range(1000):
            done = await result(client, "tasks/get", {"id": task["id"], "historyLength": 0})
            if done["status"]["state"] == "completed":
                break
            await asyncio.sleep(0.01)
        assert done["status"]["state"] == "completed"
