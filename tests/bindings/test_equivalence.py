"""Equivalence across bindings (spec 3.4.1) and each binding's own wire (spec 3.2, 3.5.6):
a task created over one binding is read, streamed and canceled over the other two with
the same states and errors; REST statuses and gRPC status codes come from the error
tree; TLS for gRPC (spec 3.2.2)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from parley.client import Client, ClientCallContext
from parley.client.transports._grpc import GRPCTransport, grpc_target
from parley.protocol import (
    BY_NAME,
    ERROR_CLASSES,
    A2AError,
    InvalidParamsError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.protocol.protobuf import pb
from parley.server import GRPCOptions, create_app
from parley.types import Task, TaskQueryParams, TaskState
from tests.bindings.conftest import BINDINGS, Served, connect
from tests.server.agents import ScriptedAgent, card
from tests.servers import running


@pytest.mark.parametrize("creator", BINDINGS)
async def test_a_task_is_the_same_task_over_every_binding(served: Served, creator: str) -> None:
    """Spec 3.4.1: same operations, results and errors whichever binding is used."""
    clients = {name: await connect(served, name) for name in BINDINGS}
    try:
        created = await clients[creator].send_message("ask")
        assert isinstance(created, Task)
        others = [name for name in BINDINGS if name != creator]
        for name in others:
            read = await clients[name].get_task(created.id)
            assert (read.id, read.context_id, read.status.state) == (
                created.id,
                created.context_id,
                TaskState.input_required,
            )
            subscribed = clients[name].resubscribe(created.id)
            first = await anext(subscribed)  # v1.0 3.1.6: it stays open for the next turn
            await subscribed.aclose()
            assert isinstance(first, Task)
            assert first.status.state is TaskState.input_required
        canceled = await clients[others[0]].cancel_task(created.id)
        assert canceled.status.state is TaskState.canceled
        for name in BINDINGS:
            assert (await clients[name].get_task(created.id)).status.state is TaskState.canceled
            again = await clients[name].cancel_task(created.id)  # idempotent in v1.0
            assert again.status.state is TaskState.canceled
            with pytest.raises(UnsupportedOperationError, match="terminal state"):
                await clients[name].send_message("again", task_id=created.id)
    finally:
        for client in clients.values():
            await client.aclose()


# -- HTTP+JSON on the wire ---------------------------------------------------------------


async def test_rest_wire_is_proto_json(served: Served) -> None:
    """Spec 3.5.6 URL table; bodies in the proto's JSON form (json_name: "message")."""
    body = {
        "message": {
            "messageId": "m-wire",
            "role": "ROLE_USER",
            "content": [{"text": "echo wire"}],
        }
    }
    async with httpx.AsyncClient(base_url=served.base) as http:
        sent = await http.post("/v1/message:send", json=body)
        assert sent.status_code == 200
        task = sent.json()["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        got = await http.get(f"/v1/tasks/{task['id']}", params={"historyLength": "0"})
        assert got.json()["id"] == task["id"]
        assert "history" not in got.json()


async def test_rest_stream_is_one_line_sse_with_sequence_ids(served: Served) -> None:
    """Spec 3.3.3: SSE; each event one data: line of proto-JSON, id: its sequence."""
    body = {"message": {"messageId": "m-sse", "role": "ROLE_USER", "content": [{"text": "x"}]}}
    async with (
        httpx.AsyncClient(base_url=served.base) as http,
        http.stream("POST", "/v1/message:stream", json=body) as response,
    ):
        raw = (await response.aread()).decode()
    assert response.headers["content-type"].startswith("text/event-stream")
    blocks = [block for block in raw.split("\n\n") if block.strip()]
    for block in blocks:
        lines = block.split("\n")
        assert lines[0].startswith("id: ")
        assert lines[1].startswith("data: ")
        assert len(lines) == 2
        assert json.loads(lines[1][6:]).keys() & {"task", "statusUpdate", "artifactUpdate"}


@pytest.mark.parametrize(
    ("method", "path", "error"),
    [
        ("GET", "/v1/tasks/nope", TaskNotFoundError),
        ("POST", "/v1/tasks/nope:cancel", TaskNotFoundError),
        ("GET", "/v1/tasks/nope?historyLength=x", InvalidParamsError),
        ("POST", "/v1/message:send", InvalidParamsError),
    ],
)
async def test_rest_errors_carry_status_and_code(
    served: Served, method: str, path: str, error: type[A2AError]
) -> None:
    """Spec 3.2.3: HTTP status of the error type, one JSON error format with the code."""
    async with httpx.AsyncClient(base_url=served.base) as http:
        response = await http.request(
            method, path, content=b"{}", headers={"content-type": "application/json"}
        )
    assert response.status_code == error.http_status
    assert response.json()["code"] == error.code
    assert isinstance(response.json()["message"], str)


async def test_rest_unknown_path_and_wrong_verb(served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.base) as http:
        unknown = await http.get("/v1/nothing")
        wrong = await http.delete("/v1/message:send")
    assert unknown.status_code == 404
    assert wrong.status_code == 405
    assert wrong.headers["allow"] == "POST"


# -- gRPC on the wire --------------------------------------------------------------------


async def test_grpc_status_and_details_of_an_error(served: Served) -> None:
    """Spec 3.2.2: A2A errors as gRPC status codes; the A2A error in the trailer."""
    port = served.app.grpc_port
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        get_task = channel.unary_unary(
            "/a2a.v1.A2AService/GetTask",
            request_serializer=pb.GetTaskRequest.SerializeToString,
            response_deserializer=pb.Task.FromString,
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await get_task(pb.GetTaskRequest(name="tasks/nope"))
    error = caught.value
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert (error.details() or "").startswith("TaskNotFoundError: ")  # the SDK's form
    metadata: Any = error.trailing_metadata() or ()
    carried = dict(metadata)["a2a-error-bin"]
    assert isinstance(carried, bytes)
    assert json.loads(carried)["code"] == TaskNotFoundError.code


def test_every_error_class_has_a_grpc_status() -> None:
    for error in ERROR_CLASSES:
        assert isinstance(getattr(grpc.StatusCode, error.grpc_status), grpc.StatusCode)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("127.0.0.1:50051", ("127.0.0.1:50051", False)),
        ("agent.example:443", ("agent.example:443", True)),
        ("grpc://agent.example:9000", ("agent.example:9000", False)),
        ("https://agent.example", ("agent.example:443", True)),
    ],
)
def test_grpc_targets(url: str, expected: tuple[str, bool]) -> None:
    assert grpc_target(url) == expected


def test_card_lists_every_binding_with_its_real_url(served: Served) -> None:
    """Spec 5.6.3 / 3.4.2: additionalInterfaces lists every transport served."""
    document = httpx.get(served.base + "/.well-known/agent-card.json").json()
    interfaces = {item["transport"]: item["url"] for item in document["additionalInterfaces"]}
    assert interfaces == {
        "JSONRPC": served.base + "/",
        "HTTP+JSON": served.base,
        "GRPC": f"127.0.0.1:{served.app.grpc_port}",
    }


def test_a_card_declaring_an_unserved_binding_is_refused() -> None:
    from parley.server import CardError
    from parley.types import AgentInterface

    interfaces = [AgentInterface(url="127.0.0.1:1", transport="GRPC")]
    with pytest.raises(CardError, match="GRPC"):
        create_app(ScriptedAgent(), card(additional_interfaces=interfaces))


# -- TLS ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    folder: Path = tmp_path_factory.mktemp("tls")
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem"),
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return (folder / "cert.pem").read_bytes(), (folder / "key.pem").read_bytes()


async def test_grpc_over_tls(certificate: tuple[bytes, bytes]) -> None:
    """Spec 3.2.2: gRPC MUST support TLS; the client trusts the given root certificate."""
    cert, key = certificate
    options = GRPCOptions(host="127.0.0.1", port=0, certificate_chain=cert, private_key=key)
    app = create_app(ScriptedAgent(), card(), grpc=options)
    with running(app):
        url = f"localhost:{app.grpc_port}"
        trusted = Client(GRPCTransport(url, tls=True, root_certificates=cert))
        async with trusted:
            result = await trusted.send_message("echo secure")
            assert isinstance(result, Task)
            assert result.status.state is TaskState.completed
        plain = GRPCTransport(url, tls=False)
        with pytest.raises(A2AError):
            await plain.request(
                BY_NAME["get_task"], TaskQueryParams(id="x"), ClientCallContext(timeout=5)
            )
        await plain.aclose()


@pytest.mark.parametrize("binding", BINDINGS)
async def test_streaming_refused_when_the_card_says_no(binding: str) -> None:
    """Spec 7.2, 8.2: -32004 UnsupportedOperationError from every binding, before a stream."""
    from parley.protocol import UnsupportedOperationError
    from parley.types import AgentCapabilities

    options = GRPCOptions(host="127.0.0.1", port=0)
    app = create_app(ScriptedAgent(), card(capabilities=AgentCapabilities()), grpc=options)
    with running(app) as base:
        async with await connect(Served(app, ScriptedAgent(), base), binding) as client:
            with pytest.raises(UnsupportedOperationError):
                async for _ in client.stream_message("echo x"):
                    pass
