"""How the JSON-RPC endpoint tells its dialects apart (docs/dialect-2025-early.md,
"How requests are told apart"; A2A v1.0.1 3.6.2 for ``A2A-Version``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from parley.demo import create_demo_app
from parley.protocol import (
    DEFAULT_DIALECT,
    SHARED_METHODS,
    V0_3,
    VersionNotSupportedError,
    dialect_for_version,
    recognise,
)
from parley.protocol.early import EARLY
from parley.server import A2AApp


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app: A2AApp = create_demo_app()
    await app.handler.start()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as client:
        yield client
    await app.handler.aclose()


def early_send(task_id: str, text: str, session: str = "s-1") -> dict[str, object]:
    message = {"role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": task_id, "sessionId": session, "message": message}


async def rpc(
    http: httpx.AsyncClient, method: str, params: object, headers: dict[str, str] | None = None
) -> dict[str, object]:
    request = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    response = await http.post("/", json=request, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, object] = response.json()
    assert answer["id"] == 7
    return answer


def test_the_rule_by_method_name_and_params() -> None:
    assert recognise("message/send", {"message": {}}) is V0_3
    assert recognise("tasks/send", {"id": "t"}) is EARLY
    assert recognise("agent/getCard", None) is EARLY
    assert recognise("tasks/get", {"id": "t"}) is V0_3
    assert recognise("tasks/get", {"id": "t", "sessionId": "s"}) is EARLY
    assert recognise("tasks/cancel", {"id": "t", "sessionId": "s"}) is EARLY
    assert recognise("no/such", {}) is DEFAULT_DIALECT is V0_3
    assert {"tasks/get", "tasks/cancel"} <= SHARED_METHODS
    assert "message/send" not in SHARED_METHODS


def test_a2a_version_selects_before_the_method() -> None:
    # v1.0.1 3.6: Major.Minor decides; a patch number is ignored; absent means 0.3.
    assert dialect_for_version("0.3") is V0_3
    assert dialect_for_version("0.3.0") is V0_3
    assert recognise("tasks/get", {"id": "t", "sessionId": "s"}, "0.3") is V0_3
    with pytest.raises(VersionNotSupportedError, match=r"0\.9"):
        dialect_for_version("0.9")


async def test_shared_name_with_session_is_answered_in_2025_early_shapes(
    http: httpx.AsyncClient,
) -> None:
    sent = await rpc(http, "tasks/send", early_send("t-shared", "tell me a joke"))
    assert "error" not in sent, sent
    early = await rpc(http, "tasks/get", {"id": "t-shared", "sessionId": "s-1"})
    v03 = await rpc(http, "tasks/get", {"id": "t-shared"})
    early_task = early["result"]
    v03_task = v03["result"]
    assert isinstance(early_task, dict)
    assert isinstance(v03_task, dict)
    assert "kind" not in early_task
    assert early_task["sessionId"] == "s-1"
    assert v03_task["kind"] == "task"
    assert v03_task["contextId"] == "s-1"
    assert "sessionId" not in v03_task


async def test_session_id_in_v0_3_metadata_stays_v0_3(http: httpx.AsyncClient) -> None:
    # The body holds the hint bytes, but the params have no sessionId: v0.3 answers.
    answer = await rpc(http, "tasks/get", {"id": "nope", "metadata": {"sessionId": "x"}})
    assert answer["error"] == {"code": -32001, "message": "Task nope was not found"}


async def test_explicit_version_0_3_keeps_2025_early_names_unknown(http: httpx.AsyncClient) -> None:
    answer = await rpc(http, "tasks/send", early_send("t-v", "hi"), {"A2A-Version": "0.3"})
    assert answer["error"] == {"code": -32601, "message": "Method not found: tasks/send"}


async def test_unsupported_version_is_refused_with_the_request_id(
    http: httpx.AsyncClient,
) -> None:
    answer = await rpc(http, "message/send", {}, {"A2A-Version": "7.1"})
    error = answer["error"]
    assert isinstance(error, dict)
    assert error["code"] == -32009
    assert "7.1" in error["message"]
    request = {"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {}}
    response = await http.post("/?A2A-Version=7.1", json=request)
    assert response.json()["error"]["code"] == -32009


def test_v0_3_table_is_the_operation_table() -> None:
    from parley.protocol import OPERATIONS

    assert {m: e.operation for m, e in V0_3.methods.items()} == {
        op.jsonrpc_method: op for op in OPERATIONS
    }
