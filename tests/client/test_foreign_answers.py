"""Answers shaped as other A2A servers send them reach the caller as parley's errors.

The official SDK (see ``tests/interop``) sends REST errors as ``{"message"}`` with no
code, lets some failures through as a bare HTTP status, asks for a push config by a
full resource name, and answers a streaming JSON-RPC method's early error as one SSE
event. Each server here is real (uvicorn on 127.0.0.1, or parley's app in memory) and
answers the way such a server does.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import grpc
import pytest

from parley.client import NotAnAgentError, connect
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
from parley.protocol.protobuf import pb, to_json
from parley.server.bindings._jsonrpc import failure
from parley.types import (
    AgentCapabilities,
    AgentCard,
    Event,
    ProtocolInterface,
    PushNotificationConfig,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from tests.client.agents import slow_app
from tests.servers import running


def agent_card(url: str, transport: str) -> AgentCard:
    return AgentCard(
        name="foreign",
        description="answers as another implementation does",
        url=url,
        version="1",
        preferred_transport=transport,
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[],
    )


class Answering:
    """An ASGI app answering every request with one status, content type and body, and
    remembering the paths it was asked for."""

    def __init__(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.status = status
        self.body = body
        self.content_type = content_type
        self.paths: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # lifespan
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            return
        self.paths.append(scope["raw_path"].decode())
        await receive()
        headers = [(b"content-type", self.content_type.encode())]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


@pytest.fixture
def served() -> Iterator[Any]:
    """Serve an ``Answering`` app on uvicorn; yields a function app -> base URL."""
    stack: list[Any] = []

    def serve(app: Answering) -> str:
        context = running(app)
        stack.append(context)
        return context.__enter__()

    yield serve
    for context in reversed(stack):
        context.__exit__(None, None, None)


def push_config(task_id: str = "t1") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        push_notification_config=PushNotificationConfig(url="https://example.invalid/hook"),
    )


async def rest_call(url: str, method: str) -> Any:
    async with connect(agent_card(url, "HTTP+JSON")) as client:
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "get_task": lambda: client.get_task("t1"),
            "cancel_task": lambda: client.cancel_task("t1"),
            "send_message": lambda: client.send_message("hi"),
            "get_extended_card": client.get_extended_card,
            "set_push_config": lambda: client.set_push_config(push_config()),
            "get_push_config": lambda: client.get_push_config("t1"),
        }
        return await calls[method]()


@pytest.mark.parametrize(
    ("method", "status", "error_class"),
    [
        ("get_task", 404, TaskNotFoundError),
        ("cancel_task", 409, TaskNotCancelableError),
        ("send_message", 422, InvalidParamsError),
        ("send_message", 400, InvalidParamsError),
        ("send_message", 501, UnsupportedOperationError),
        ("send_message", 500, InternalError),
        ("get_extended_card", 404, AuthenticatedExtendedCardNotConfiguredError),
        ("set_push_config", 501, PushNotificationNotSupportedError),
        ("get_push_config", 501, PushNotificationNotSupportedError),
    ],
)
async def test_rest_error_without_a_code_is_read_from_the_status(
    served: Any, method: str, status: int, error_class: type[A2AError]
) -> None:
    """Spec 3.2.3: an HTTP+JSON error body with only a message (as the official SDK
    sends it) gets the class its status means for the operation called."""
    url = served(Answering(status, b'{"message":"as the server said"}'))
    with pytest.raises(error_class) as raised:
        await rest_call(url, method)
    assert type(raised.value) is error_class
    assert raised.value.message == "as the server said"


async def test_rest_extended_card_path_missing_is_not_configured(served: Any) -> None:
    """Spec 7.10: ``/v1/card`` exists only when the agent offers an extended card, so a
    404 there with any body means it has none."""
    url = served(Answering(404, b'{"detail":"Not Found"}'))
    with pytest.raises(AuthenticatedExtendedCardNotConfiguredError, match="HTTP 404"):
        await rest_call(url, "get_extended_card")


async def test_rest_plain_text_500_names_the_status(served: Any) -> None:
    """Spec 3.2.3: a bare ``500 Internal Server Error`` in text/plain (no A2A error body)
    is NotAnAgentError naming the status, never a JSON decoding error."""
    url = served(Answering(500, b"Internal Server Error", "text/plain; charset=utf-8"))
    async with connect(agent_card(url, "HTTP+JSON")) as client:
        with pytest.raises(NotAnAgentError) as raised:
            async for _ in client.stream_message("stream 2"):
                pass
    assert raised.value.status_code == 500
    assert "HTTP 500 (text/plain)" in raised.value.message


async def test_rest_push_config_without_an_id_asks_for_the_task_id(served: Any) -> None:
    """Spec 7.6: the HTTP+JSON path names a config id; without one the client asks for
    the task's id (a config set with no id is stored under it), never a placeholder."""
    stored = pb.TaskPushNotificationConfig(
        name="tasks/t1/pushNotificationConfigs/t1",
        push_notification_config=pb.PushNotificationConfig(id="t1", url="https://a.example/"),
    )
    app = Answering(200, to_json(stored))
    url = served(app)
    config = await rest_call(url, "get_push_config")
    assert app.paths == ["/v1/tasks/t1/pushNotificationConfigs/t1"]
    assert config.task_id == "t1"
    assert config.push_notification_config.url == "https://a.example/"


@pytest.fixture
async def grpc_recorder() -> AsyncIterator[tuple[str, list[str]]]:
    """A gRPC server whose GetTaskPushNotificationConfig records the name asked for."""
    names: list[str] = []

    async def get_config(request: Any, context: Any) -> Any:
        names.append(request.name)
        return pb.TaskPushNotificationConfig(
            name=request.name,
            push_notification_config=pb.PushNotificationConfig(url="https://a.example/"),
        )

    handler = grpc.method_handlers_generic_handler(
        "a2a.v1.A2AService",
        {
            "GetTaskPushNotificationConfig": grpc.unary_unary_rpc_method_handler(
                get_config,
                request_deserializer=pb.GetTaskPushNotificationConfigRequest.FromString,
                response_serializer=pb.TaskPushNotificationConfig.SerializeToString,
            )
        },
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}", names
    finally:
        await server.stop(None)


async def test_grpc_push_config_without_an_id_names_the_task_id(
    grpc_recorder: tuple[str, list[str]],
) -> None:
    """Spec 7.6 (gRPC ``name=tasks/{id}/pushNotificationConfigs/{id}``): without a config
    id the client names the task's id; the official SDK refuses a bare ``tasks/{id}``."""
    url, names = grpc_recorder
    async with connect(agent_card(url, "GRPC")) as client:
        config = await client.get_push_config("t1")
    assert names == ["tasks/t1/pushNotificationConfigs/t1"]
    assert config.task_id == "t1"


# -- JSON-RPC: a streaming method's error before its first event, in both forms -----------


async def resubscribe_all(source: Any, task_id: str) -> list[Event]:
    async with connect(source) as client:
        return [event async for event in client.resubscribe(task_id)]


async def test_jsonrpc_stream_error_from_parleys_server() -> None:
    """Spec 7.9, 8.2: resubscribing to an unknown task raises TaskNotFoundError, whether
    parley's server answers it as application/json or as an SSE event."""
    with pytest.raises(TaskNotFoundError):
        await resubscribe_all(slow_app(0), "no-such-task")
    with running(slow_app(0)) as url, pytest.raises(TaskNotFoundError):
        await resubscribe_all(url, "no-such-task")


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/event-stream", b"data: " + failure(1, TaskNotFoundError("gone")) + b"\n\n"),
        ("application/json", failure(1, TaskNotFoundError("gone"))),
    ],
    ids=["sse-event", "json-body"],
)
async def test_jsonrpc_stream_error_in_either_form(
    served: Any, content_type: str, body: bytes
) -> None:
    """Spec 7 (intro), 3.3.1: a streaming method's error may come as the first SSE event
    (as the official SDK sends it) or as a plain JSON-RPC response; both are the error."""
    url = served(Answering(200, body, content_type))
    with pytest.raises(TaskNotFoundError, match="gone"):
        await resubscribe_all(agent_card(f"{url}/", "JSONRPC"), "no-such-task")


@pytest.mark.parametrize(
    ("transport", "protocol"),
    [("JSONRPC", "0.3"), ("JSONRPC", "1.0"), ("HTTP+JSON", "0.3"), ("HTTP+JSON", "1.0")],
)
@pytest.mark.parametrize("status", [204, 200, 202])
async def test_an_empty_success_answers_a_push_config_delete(
    served: Any, transport: str, protocol: str, status: int
) -> None:
    """Spec 7.8: the delete's result is empty; any 2xx with no body (the ``204 No
    Content`` some agents send) is that result, not a foreign answer."""
    app = Answering(status, b"")
    url = served(app)
    card = agent_card(url, transport).model_copy(
        update={
            "capabilities": AgentCapabilities(streaming=True, push_notifications=True),
            "supported_interfaces": [
                ProtocolInterface(url=url, protocol_binding=transport, protocol_version=protocol)
            ],
        }
    )
    async with connect(card) as client:
        await client.delete_push_config("t1", "c1")  # no NotAnAgentError
        with pytest.raises(NotAnAgentError, match=f"HTTP {status}"):
            await client.get_push_config("t1", "c1")  # a result that cannot be empty
    assert len(app.paths) == 2


def _v1_card(url: str, transport: str) -> AgentCard:
    return agent_card(url, transport).model_copy(
        update={
            "supported_interfaces": [
                ProtocolInterface(url=url, protocol_binding=transport, protocol_version="1.0")
            ]
        }
    )


@pytest.mark.parametrize("transport", ["JSONRPC", "HTTP+JSON"])
async def test_numeric_states_and_nanoseconds_in_a_peers_stream(
    served: Any, transport: str
) -> None:
    """ProtoJSON (v1.0.1 5.5): a peer may write an enum as its number and a time to the
    nanosecond; a status update's state 2 is working, 3 completed, 99 one the client does
    not know, read as in a send's result, and the time is kept whole."""
    time = "2026-12-07T20:22:50.123456789Z"
    updates = [
        {
            "statusUpdate": {
                "taskId": "t",
                "contextId": "c",
                "status": {"state": s, "timestamp": time},
            }
        }
        for s in (2, 99, 3)
    ]
    results = [{"jsonrpc": "2.0", "id": 1, "result": u} for u in updates]
    events = results if transport == "JSONRPC" else updates
    body = b"".join(b"data: %s\n\n" % json.dumps(event).encode() for event in events)
    url = served(Answering(200, body, "text/event-stream"))
    async with connect(_v1_card(url, transport)) as client:
        streamed = [event async for event in client.stream_message("hi")]
    states = [e.status.state for e in streamed if isinstance(e, TaskStatusUpdateEvent)]
    assert states == [TaskState.working, TaskState.unknown, TaskState.completed]
    assert {e.status.timestamp for e in streamed if isinstance(e, TaskStatusUpdateEvent)} == {
        "2026-12-07T20:22:50.123456789+00:00"
    }
