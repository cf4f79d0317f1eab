"""Whatever a 2025-early client sends, it gets an answer of the dialect's error table (or
a result), never an HTTP 500 or an internal error ("Error Handling" of the 2025-early
specification). Random params built from the dialect's own member names, so most requests
get deep into decoding; bounded to a few hundred requests over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.dialects.early import early_app
from tests.servers import running

METHODS = [
    "agent/getCard",
    "tasks/send",
    "tasks/sendSubscribe",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    "tasks/pushNotification/set",
    "tasks/pushNotification/get",
]
NAMES = [
    "id",
    "sessionId",
    "message",
    "role",
    "parts",
    "type",
    "text",
    "file",
    "bytes",
    "uri",
    "data",
    "url",
    "headers",
    "historyLength",
    "acceptedOutputModes",
    "metadata",
]
TABLE = {-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32000}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "user", "agent", "text", "file", "data", "t-1", "session-1", "aGk="]),
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(NAMES), inner, max_size=4),
    ),
    max_leaves=12,
)
params = st.one_of(values, st.dictionaries(st.sampled_from(NAMES), values, max_size=5))


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    app, _ = early_app()
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(method=st.sampled_from(METHODS), params=params, request_id=st.integers(0, 9))
def test_any_params_get_an_answer_of_the_table(
    http: httpx.Client, method: str, params: Any, request_id: int
) -> None:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    response = http.post("/", json=body)
    assert response.status_code == 200, response.text
    for answer in _answers(response):
        assert answer["jsonrpc"] == "2.0"
        assert answer["id"] == request_id
        if "error" in answer:
            assert answer["error"]["code"] in TABLE - {-32603}, answer
            assert isinstance(answer["error"]["message"], str)
        else:
            assert "result" in answer


def _answers(response: httpx.Response) -> list[dict[str, Any]]:
    if response.headers["content-type"].startswith("text/event-stream"):
        return [
            json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")
        ]
    answer: dict[str, Any] = response.json()
    return [answer]
