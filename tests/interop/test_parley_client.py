"""parley's client against an agent built with the official SDK (``peers/sdk_server.py``).

The SDK server runs as its own process in the interop venv; parley's ``connect`` finds
it by its card and calls every operation. Where the SDK answers differently from the
spec, the test says so with the spec section, and checks what the spec asks where the
two agree.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from parley.client import NotAnAgentError, StreamInterruptedError, connect, fetch_card
from parley.protocol import (
    A2AError,
    AuthenticatedExtendedCardNotConfiguredError,
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.types import (
    Event,
    Message,
    PushNotificationConfig,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from tests.interop.sdk import serving_peer
from tests.schema import validate_wire

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]


class Peer:
    """An SDK agent (and its ``--plain`` twin) serving one binding."""

    def __init__(self, binding: str, url: str, plain_url: str, interface_url: str) -> None:
        self.binding = binding
        self.url = url
        self.plain_url = plain_url
        self.interface_url = interface_url
        """The ``url`` its card declares for ``binding``."""

    def connect(self, *, plain: bool = False) -> connect:
        """parley's client for the agent, choosing the binding under test from the card."""
        return connect(self.plain_url if plain else self.url, transports=[self.binding])


@pytest.fixture(scope="module", params=BINDINGS)
def peer(request: pytest.FixtureRequest, sdk: Path) -> Iterator[Peer]:
    binding = request.param
    grpc = binding == "GRPC"
    with (
        serving_peer(sdk, "sdk_server.py", "--binding", binding, grpc=grpc) as served,
        serving_peer(sdk, "sdk_server.py", "--binding", binding, "--plain", grpc=grpc) as plain,
    ):
        url = f"http://127.0.0.1:{served.port}"
        # What each binding's card declares, as the peer builds it in the SDK's style.
        grpc_url = f"127.0.0.1:{served.grpc_port}"
        declared = {"JSONRPC": f"{url}/", "HTTP+JSON": url, "GRPC": grpc_url}
        yield Peer(binding, url, f"http://127.0.0.1:{plain.port}", declared[binding])


def text_of_artifacts(task: Task) -> str:
    return "".join(
        part.text
        for artifact in task.artifacts or ()
        for part in artifact.parts
        if isinstance(part, TextPart)
    )


async def test_card_discovery(peer: Peer) -> None:
    """Spec 5.3: the SDK's card is found at the well-known path and parsed whole."""
    card = await fetch_card(peer.url)
    assert card.name == "a2a-sdk interop agent"
    assert card.url == peer.interface_url
    assert card.preferred_transport == peer.binding
    assert card.capabilities.streaming is True
    assert card.supports_authenticated_extended_card is True
    async with httpx.AsyncClient() as http:
        raw = (await http.get(f"{peer.url}/.well-known/agent-card.json")).json()
    validate_wire("AgentCard", raw)


async def test_send_answers_with_the_task(peer: Peer) -> None:
    async with peer.connect() as client:
        task = await client.send_message("hello interop")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.completed
    assert text_of_artifacts(task) == "echo: hello interop"
    assert task.artifacts is not None
    assert task.artifacts[0].name == "response"
    assert task.history is not None
    assert task.history[0].role.value == "user"


async def test_send_answers_with_a_direct_message(peer: Peer) -> None:
    async with peer.connect() as client:
        reply = await client.send_message("message hi there")
    assert isinstance(reply, Message)
    assert reply.role.value == "agent"
    assert reply.parts == [TextPart(text="hi there")]


async def test_stream_gives_the_task_then_its_updates(peer: Peer) -> None:
    """Spec 7.2."""
    async with peer.connect() as client:
        events = [event async for event in client.stream_message("stream 3")]
    assert isinstance(events[0], Task)
    assert events[0].status.state is TaskState.submitted
    artifacts = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert [
        "".join(p.text for p in a.artifact.parts if isinstance(p, TextPart)) for a in artifacts
    ] == [
        "chunk 0;",
        "chunk 1;",
        "chunk 2;",
    ]
    assert [a.append for a in artifacts] == [None, True, True]
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.final is True
    assert last.status.state is TaskState.completed


async def test_stream_answers_with_a_direct_message(peer: Peer) -> None:
    async with peer.connect() as client:
        events = [event async for event in client.stream_message("message streamed")]
    assert len(events) == 1
    assert isinstance(events[0], Message)


async def test_second_turn_and_get_with_history_length(peer: Peer) -> None:
    """Spec 6.3, 7.1, 7.3."""
    async with peer.connect() as client:
        asked = await client.send_message("ask")
        assert isinstance(asked, Task)
        assert asked.status.state is TaskState.input_required
        done = await client.send_message("more", task_id=asked.id, context_id=asked.context_id)
        assert isinstance(done, Task)
        assert done.status.state is TaskState.completed
        assert text_of_artifacts(done) == "thanks for: more"
        full = await client.get_task(done.id)
        last = await client.get_task(done.id, history_length=1)
    assert full.history is not None
    assert len(full.history) >= 2
    assert last.history is not None
    assert [m.message_id for m in last.history] == [full.history[-1].message_id]


async def test_cancel(peer: Peer) -> None:
    """Spec 7.4."""
    async with peer.connect() as client:
        waiting = await client.send_message("wait", blocking=False)
        assert isinstance(waiting, Task)
        canceled = await client.cancel_task(waiting.id)
        assert canceled.status.state is TaskState.canceled
        assert (await client.get_task(waiting.id)).status.state is TaskState.canceled


async def test_resubscribe_joins_a_running_task(peer: Peer) -> None:
    """Spec 7.9: the stream resumes on a running task and ends with its final event."""
    events: list[Event] = []
    async with peer.connect() as client:
        slow = await client.send_message("slow", blocking=False)
        assert isinstance(slow, Task)

        async def follow() -> None:
            async for event in client.resubscribe(slow.id):
                events.append(event)

        async with asyncio.timeout(20):
            if peer.binding == "GRPC":
                # a2a-sdk 0.3.26 deviation (spec 7.9, and the proto's TaskSubscription: "if
                # the task is complete the stream will return the completed task"): its
                # gRPC TaskSubscription closes with status OK after the last artifact,
                # before the final status-update. parley's client resumes a stream that
                # closed without its final event; the SDK refuses to resubscribe to the
                # task once it is finished, with InvalidParamsError, which reaches the
                # caller. (When the resume comes before the SDK has stored the final
                # status, which a loaded machine makes possible, the resume is served.)
                refused: InvalidParamsError | None = None
                try:
                    await follow()
                except InvalidParamsError as error:
                    refused = error
                assert refused is None or "terminal state" in str(refused)
            else:
                await follow()
        final = await client.get_task(slow.id)
    chunks = [
        part.text
        for event in events
        if isinstance(event, TaskArtifactUpdateEvent)
        for part in event.artifact.parts
        if isinstance(part, TextPart)
    ]
    assert chunks
    assert chunks == ["part 0;", "part 1;", "part 2;"][-len(chunks) :]
    assert final.status.state is TaskState.completed
    if peer.binding != "GRPC":
        last = events[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.final is True
    # a2a-sdk 0.3.26 deviation (spec 7.2.2, TaskArtifactUpdateEvent.append): while a
    # resubscriber listens, the SDK server folds each appended chunk into its stored task
    # twice (the run's consumer and the resubscriber's both apply it), so tasks/get
    # answers "part 0;part 1;part 1;part 2;part 2;". Only the order is checked here.
    stored = text_of_artifacts(final)
    assert stored.startswith("part 0;")
    assert stored.endswith("part 2;")


async def expect(error: type[A2AError], call: Any) -> A2AError:
    with pytest.raises(error) as raised:
        await call
    return raised.value


async def test_errors_arrive_as_parley_errors(peer: Peer) -> None:
    """Spec 8.2: each A2A error code becomes parley's class for it."""
    async with peer.connect() as client:
        await expect(TaskNotFoundError, client.get_task("no-such-task"))
        await expect(TaskNotFoundError, client.cancel_task("no-such-task"))
        done = await client.send_message("done soon")
        assert isinstance(done, Task)
        await expect(TaskNotCancelableError, client.cancel_task(done.id))

        async def resubscribe_missing() -> list[Event]:
            return [event async for event in client.resubscribe("no-such-task")]

        if peer.binding == "HTTP+JSON":
            # a2a-sdk 0.3.26 deviation (spec 3.2.3: an error is an HTTP status with a JSON
            # body; 3.3.3): GET /v1/tasks/{id}:subscribe of an unknown task answers 200
            # text/event-stream and then drops the connection mid-body (the TaskNotFound
            # is raised inside the SSE generator). parley's client sees a broken stream,
            # tries to resume it, and reports StreamInterruptedError with no event seen.
            broken = await expect(StreamInterruptedError, resubscribe_missing())
            assert isinstance(broken, StreamInterruptedError)
            assert broken.last_event_id is None
        else:
            await expect(TaskNotFoundError, resubscribe_missing())


async def test_stream_refused_by_an_agent_that_does_not_stream(peer: Peer) -> None:
    """a2a-sdk 0.3.26 deviation (spec 7.2, 8.2): with capabilities.streaming false the
    spec's error for the unsupported operation is -32004 UnsupportedOperationError
    (parley sends -32004). The SDK answers JSON-RPC with -32603 InternalError and gRPC
    with status UNKNOWN ("Streaming is not supported by the agent", raised outside its
    error mapping), both InternalError in parley's client; over HTTP+JSON (spec 3.2.3:
    a JSON error body with the matching status) it answers HTTP 500 text/plain "Internal
    Server Error", which parley's client reports as NotAnAgentError naming the status."""
    async with peer.connect(plain=True) as plain:

        async def stream_refused() -> list[Event]:
            return [event async for event in plain.stream_message("stream 2")]

        if peer.binding == "HTTP+JSON":
            error = await expect(NotAnAgentError, stream_refused())
            assert isinstance(error, NotAnAgentError)
            assert error.status_code == 500
            assert "HTTP 500 (text/plain)" in error.message
        else:
            error = await expect(InternalError, stream_refused())
            assert error.code == -32603
            assert "Streaming is not supported" in error.message


async def test_extended_card_not_configured(peer: Peer) -> None:
    """Spec 7.10, 8.2: an agent with no extended card answers -32007
    AuthenticatedExtendedCardNotConfiguredError; over HTTP+JSON ``/v1/card`` exists only
    when the card offers one, so the SDK's 404 there is that error in parley's client.

    a2a-sdk 0.3.26 deviations: JSON-RPC answers -32603 InternalError "Authenticated card
    not supported" (parley's client passes the code through as it came); gRPC
    GetAgentCard answers with the public card (its GrpcHandler serves no extended card)."""
    async with peer.connect(plain=True) as plain:
        if peer.binding == "GRPC":
            card = await plain.get_extended_card()
            assert card.supports_authenticated_extended_card is None
            assert card.name == "a2a-sdk interop agent"
        elif peer.binding == "HTTP+JSON":
            await expect(AuthenticatedExtendedCardNotConfiguredError, plain.get_extended_card())
        else:
            error = await expect(InternalError, plain.get_extended_card())
            assert error.code == -32603
            assert not isinstance(error, AuthenticatedExtendedCardNotConfiguredError)


async def test_history_length_below_zero(peer: Peer) -> None:
    """a2a-sdk 0.3.26 accepts historyLength -1 and answers with the task; parley refuses
    it with -32602. Spec 7.3 gives no rule for a negative value, so both are allowed."""
    async with peer.connect() as client:
        done = await client.send_message("done soon")
        assert isinstance(done, Task)
        assert (await client.get_task(done.id, history_length=-1)).id == done.id


# What each push config method of an SDK agent without push notifications raises in
# parley's client, per binding; the spec's answer is -32003 PushNotificationNotSupportedError
# for every one (spec 8.2, 7.5-7.8).
PUSH_ERRORS: dict[str, dict[str, type[A2AError]]] = {
    # -32603 for set, -32004 for the others
    "JSONRPC": dict.fromkeys(("get", "list", "delete"), UnsupportedOperationError)
    | {"set": InternalError},
    # HTTP 501 {"message"} for set and get (no code: parley reads 501 on a push method
    # as -32003); list raises NotImplementedError inside the SDK (HTTP 500 "unknown
    # exception"); DELETE has no route (HTTP 405 {"detail": "Method Not Allowed"}).
    "HTTP+JSON": {
        "set": PushNotificationNotSupportedError,
        "get": PushNotificationNotSupportedError,
        "list": InternalError,
        "delete": NotAnAgentError,
    },
    # set: status UNKNOWN (raised outside the SDK's error mapping); get: UNIMPLEMENTED
    # "UnsupportedOperationError: ..."; list and delete are not implemented by its
    # GrpcHandler (UNIMPLEMENTED "Method not implemented!").
    "GRPC": dict.fromkeys(("get", "list", "delete"), UnsupportedOperationError)
    | {"set": InternalError},
}


async def test_push_config_methods_without_push_support(peer: Peer) -> None:
    """a2a-sdk 0.3.26 deviation (spec 8.2, 7.5-7.8, 3.5.6): an agent without push
    notifications should answer -32003 PushNotificationNotSupportedError on every
    binding; the SDK answers as ``PUSH_ERRORS`` lists. Each arrives in parley's client
    as an A2AError: the class of the code sent, or, with no code, of the status."""
    expected = PUSH_ERRORS[peer.binding]
    async with peer.connect() as client:
        task = await client.send_message("push please")
        assert isinstance(task, Task)
        config = TaskPushNotificationConfig(
            task_id=task.id,
            push_notification_config=PushNotificationConfig(url="https://example.invalid/hook"),
        )
        errors = {
            "set": await expect(expected["set"], client.set_push_config(config)),
            "get": await expect(expected["get"], client.get_push_config(task.id)),
            "list": await expect(expected["list"], client.list_push_configs(task.id)),
            "delete": await expect(expected["delete"], client.delete_push_config(task.id, "x")),
        }
    assert {name: type(error) for name, error in errors.items()} == expected
    if peer.binding == "HTTP+JSON":
        assert "HTTP 405" in errors["delete"].message


async def test_extended_card(peer: Peer) -> None:
    """Spec 7.10. a2a-sdk 0.3.26 deviation: its gRPC GetAgentCard answers with the public
    card (GrpcHandler takes no extended card), so over gRPC the extended skill is
    missing."""
    async with peer.connect() as client:
        card = await client.get_extended_card()
    if peer.binding == "GRPC":
        assert card.name == "a2a-sdk interop agent"
        assert [skill.id for skill in card.skills] == ["echo"]
        return
    assert card.name == "a2a-sdk interop agent (extended)"
    assert [skill.id for skill in card.skills] == ["echo", "secret"]
