"""Bad v1.0 input gets v1.0's error, never a 500 (v1.0.1 §3.3.2, §9.5, §11.6): HTTP+JSON
and JSON-RPC requests that are not ProtoJSON of their message, or do not fit the core."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.bindings.conftest import Served

V1 = {"A2A-Version": "1.0"}
JSON = {"Content-Type": "application/json"}
MESSAGE = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "echo hi"}]}
BAD_SENDS: list[Any] = [
    {"message": {**MESSAGE, "parts": []}},  # no parts
    {"message": {**MESSAGE, "parts": [{}]}},  # a part with no content
    {"message": {**MESSAGE, "parts": [{"data": [1, 2]}]}},  # data that is not an object
    {"message": {**MESSAGE, "role": "ROLE_UNSPECIFIED"}},
    {"message": {**MESSAGE, "role": "user"}},  # v0.3's spelling
    {"message": {**MESSAGE, "parts": [{"text": 5}]}},
    {"configuration": {"historyLength": "many"}, "message": MESSAGE},
    {},  # no message
]


@pytest.mark.parametrize("body", BAD_SENDS)
async def test_rest_bad_send_is_400_with_error_info(served: Served, body: Any) -> None:
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{served.base}/message:send", json=body, headers=V1)
    assert answer.status_code == 400, answer.text
    status = answer.json()["error"]
    assert status["status"] == "INVALID_ARGUMENT"
    assert status["details"][0]["reason"] == "INVALID_PARAMS"


@pytest.mark.parametrize("body", BAD_SENDS)
async def test_jsonrpc_bad_send_is_invalid_params(served: Served, body: Any) -> None:
    request = {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": body}
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{served.base}/", json=request, headers=V1)
    assert answer.status_code == 200
    error = answer.json()["error"]
    assert error["code"] == -32602
    assert error["data"][0]["reason"] == "INVALID_PARAMS"


@pytest.mark.parametrize(
    "query",
    ["status=BOGUS", "statusTimestampAfter=yesterday", "pageSize=0", "pageToken=zz", "pageSize=x"],
)
async def test_rest_bad_list_query_is_400(served: Served, query: str) -> None:
    async with httpx.AsyncClient() as http:
        answer = await http.get(f"{served.base}/tasks?{query}", headers=V1)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["details"][0]["reason"] == "INVALID_PARAMS"


async def test_rest_body_that_is_not_json(served: Served) -> None:
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{served.base}/message:send", content=b"{nope", headers={**V1, **JSON}
        )
    assert answer.status_code == 400
    assert answer.json()["error"]["details"][0]["reason"] == "PARSE_ERROR"


async def test_unsupported_version_on_every_http_binding(served: Served) -> None:
    """v1.0.1 §3.6.2: VersionNotSupportedError, in the error form of the binding."""
    headers = {"A2A-Version": "0.9"}
    request = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
    async with httpx.AsyncClient() as http:
        rest = await http.get(f"{served.base}/tasks/x", headers=headers)
        rpc = await http.post(f"{served.base}/", json=request, headers=headers)
    assert rest.status_code == 400
    assert rest.json()["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    assert rpc.json()["error"]["code"] == -32009


async def test_rest_body_nested_too_deep_is_invalid_params(served: Served) -> None:
    deep = b'{"message":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{served.base}/message:send",
            content=deep,
            headers={**V1, "Content-Type": "application/json"},
        )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["details"][0]["reason"] == "INVALID_PARAMS"


@pytest.mark.parametrize("tenant", [5, True, ["acme"], {"name": "acme"}])
async def test_tenant_that_is_not_a_string_is_refused(served: Served, tenant: Any) -> None:
    """Every v1.0 request message's ``tenant`` is a string (v1.0.1 §4.1): another type is
    invalid params naming the field on both HTTP bindings, never a 500 and never read as
    the default tenant."""
    body = {"tenant": tenant, "message": MESSAGE}
    params = {"tenant": tenant, "id": "t-1"}
    request = {"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": params}
    async with httpx.AsyncClient() as http:
        rest = await http.post(f"{served.base}/message:send", json=body, headers=V1)
        rpc = await http.post(f"{served.base}/", json=request, headers=V1)
        rpc_send = await http.post(
            f"{served.base}/",
            json={"jsonrpc": "2.0", "id": 4, "method": "SendMessage", "params": body},
            headers=V1,
        )
    assert rest.status_code == 400, rest.text
    assert rest.json()["error"]["details"][0]["reason"] == "INVALID_PARAMS"
    assert "tenant" in rest.json()["error"]["message"]
    for answer in (rpc, rpc_send):
        error = answer.json()["error"]
        assert error["code"] == -32602, answer.text
        assert "tenant" in error["message"]
