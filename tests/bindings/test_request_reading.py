"""The speed seam reads a JSON-RPC request into dicts of its members rather than its
envelope model (``parley._speedups.jsonrpc``): the same id, operation and params as the
models of ``A2ARequest``, and refused where they are refused, for every method; with
the seam off it declines every request."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from parley._speedups import enabled
from parley._speedups.jsonrpc import read_request
from parley.protocol import BY_JSONRPC_METHOD
from parley.types import A2ARequest
from tests.speedups import plain

_MODELS = TypeAdapter[Any](A2ARequest)
_MESSAGE = {
    "kind": "message",
    "messageId": "m-1",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
}
_PARAMS: dict[str, Any] = {
    "message/send": {"message": _MESSAGE, "configuration": {"blocking": True}},
    "message/stream": {"message": _MESSAGE, "metadata": {"a": 1}},
    "tasks/get": {"id": "t-1", "historyLength": 2},
    "tasks/cancel": {"id": "t-1"},
    "tasks/resubscribe": {"id": "t-1"},
    "tasks/pushNotificationConfig/set": {
        "taskId": "t-1",
        "pushNotificationConfig": {"url": "https://example.com/hook"},
    },
    "tasks/pushNotificationConfig/get": {"id": "t-1", "pushNotificationConfigId": "c"},
    "tasks/pushNotificationConfig/list": {"id": "t-1"},
    "tasks/pushNotificationConfig/delete": {"id": "t-1", "pushNotificationConfigId": "c"},
    "agent/getAuthenticatedExtendedCard": {"any": "thing"},
}
_CASES = [
    *(
        {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
        for method, params in _PARAMS.items()
    ),
    {"jsonrpc": "2.0", "id": "s", "method": "agent/getAuthenticatedExtendedCard"},
    {"jsonrpc": "2.0", "id": None, "method": "tasks/get", "params": {"id": "t"}, "extra": 1},
    {"jsonrpc": "2.0", "id": True, "method": "tasks/get", "params": {"id": "t"}},
    {"jsonrpc": "2.0", "id": 1.5, "method": "tasks/get", "params": {"id": "t"}},
    {"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "t"}},
    {"jsonrpc": "1.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}},
    {"jsonrpc": "2.0", "id": 1, "method": "tasks/get"},
    {"jsonrpc": "2.0", "id": 1, "method": "tasks/nothing", "params": {}},
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {"message": {**_MESSAGE, "parts": []}},
    },
]


@pytest.mark.parametrize(
    "request_body", _CASES, ids=lambda case: f"{case.get('method')}-{case.get('id')!r}"
)
def test_a_request_reads_as_its_model_reads(request_body: dict[str, Any]) -> None:
    body = json.dumps(request_body).encode()
    try:
        model = _MODELS.validate_json(body)
    except ValidationError:
        expected = None
    else:
        expected = (model.id, BY_JSONRPC_METHOD[model.method], model.params)
    if enabled():
        assert read_request(body, None) == expected
        assert read_request(body, "0.3") == expected
    with plain():
        assert read_request(body, None) is None
