"""The headers an agent sees in ``RequestContext.call``: every request's own, decoded as
latin-1 (ASGI's bytes), whatever the requests before it sent; and a credential's value
kept nowhere past its request (the decoded names and common values are remembered
between requests, ``_http.request_headers``)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from parley.server import CallContext, EventSink, Principal, RequestContext, create_app
from parley.server._card import FORWARDED
from parley.server.bindings import _http
from tests.server.agents import ScriptedAgent, card


class _Recording(ScriptedAgent):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[dict[str, str]] = []

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        self.seen.append(dict(context.call.headers))
        await super().execute(context, events)


def _send(number: int) -> dict[str, object]:
    message = {
        "role": "user",
        "messageId": f"m-{number}",
        "parts": [{"kind": "text", "text": "echo"}],
    }
    return {
        "jsonrpc": "2.0",
        "id": number,
        "method": "message/send",
        "params": {"message": message},
    }


async def test_each_request_sees_its_own_headers_decoded_as_latin_1() -> None:
    agent = _Recording()
    transport = httpx.ASGITransport(app=create_app(agent, card()))
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        for number, agent_name in enumerate([b"caf\xe9/1", b"caf\xe9/1", b"other", b""]):
            headers = [(b"user-agent", agent_name), (b"x-note", b"n\xfc%d" % number)]
            response = await http.post("/", json=_send(number), headers=headers)
            assert response.json()["result"]["status"]["state"] == "completed"
    assert [seen["user-agent"] for seen in agent.seen] == ["café/1", "café/1", "other", ""]
    assert [seen["x-note"] for seen in agent.seen] == [f"nü{n}" for n in range(4)]
    assert all(seen["host"] == "agent.test" for seen in agent.seen)


async def test_credentials_are_not_kept_and_what_is_kept_stays_bounded() -> None:
    agent = _Recording()
    transport = httpx.ASGITransport(app=create_app(agent, card()))
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as http:
        for number in range(_http._DECODED_MAX + 20):
            headers = {"authorization": f"Bearer secret-{number}", "user-agent": f"ua-{number}"}
            await http.post("/", json=_send(number), headers=headers)
    assert [seen["authorization"] for seen in agent.seen[-3:]] == [
        f"Bearer secret-{number}"
        for number in range(_http._DECODED_MAX + 17, _http._DECODED_MAX + 20)
    ]
    assert [seen["user-agent"] for seen in agent.seen[-2:]] == [
        f"ua-{number}" for number in range(_http._DECODED_MAX + 18, _http._DECODED_MAX + 20)
    ]
    assert not any(b"secret" in raw for raw in _http._DECODED)
    assert 0 < len(_http._DECODED) <= _http._DECODED_MAX


_PLAIN = [(b"host", b"agent.test:81"), (b"content-type", b"application/json")]


@pytest.mark.parametrize(
    ("headers", "user"),
    [
        (_PLAIN, None),
        ([*_PLAIN, (b"x-a2a-extensions", b"urn:a, urn:b")], None),
        ([*_PLAIN, (b"x-a2a-extensions", b"")], None),
        ([*_PLAIN, (b"last-event-id", b"7")], None),
        (_PLAIN, Principal("alice", "key")),
        ([], None),
    ],
)
def test_a_call_is_what_from_headers_makes_of_its_headers(
    headers: list[tuple[bytes, bytes]], user: Principal | None
) -> None:
    """Every call's context is what ``CallContext.from_headers`` makes of its headers and
    user, the base URL the request's own."""
    scope: dict[str, Any] = {
        "type": "http",
        "scheme": "http",
        "root_path": "/agent",
        "server": ("10.0.0.1", 80),
        "headers": headers,
        FORWARDED: True,
        **({"user": user} if user is not None else {}),
    }
    decoded = _http.request_headers(scope)
    call = _http.call_context(scope, decoded)
    base = "http://agent.test:81/agent" if headers else "http://10.0.0.1:80/agent"
    assert call == CallContext.from_headers(decoded, base_url=base, principal=user)
    assert call.base_url == base
