"""Card resolution and transport selection (spec 5.3, 5.6.3, 5.6.4, 7.10)."""

from __future__ import annotations

import gc
import json
import socket
import warnings
from pathlib import Path
from typing import Any

import pytest

from parley.client import (
    BearerAuth,
    CardError,
    Client,
    ClientCall,
    ClientError,
    NotAnAgentError,
    _transport,
    candidate_interfaces,
    card_warnings,
    connect,
    fetch_card,
    text_of,
)
from parley.client._card import parse_card
from parley.client._errors import AgentUnreachableError
from parley.client._selection import Candidate, FallbackTransport
from parley.client.transports._http import HTTPBinding
from parley.demo import create_demo_app, demo
from parley.server import create_app
from parley.types import AgentInterface
from tests.client.agents import card, lifespan
from tests.servers import running


def serving(path: str, body: bytes, status: int = 200) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        found = scope["path"] == path
        headers = [(b"content-type", b"application/json")]
        await send(
            {"type": "http.response.start", "status": status if found else 404, "headers": headers}
        )
        await send({"type": "http.response.body", "body": body if found else b"{}"})

    return app


async def test_card_from_base_url() -> None:
    """Spec 5.3: the card is at /.well-known/agent-card.json under the base URL."""
    with running(create_demo_app()) as url:
        found = await fetch_card(url)
        assert found.name == "parley demo agent"
        assert found.url == url + "/"


async def test_card_falls_back_to_the_older_path() -> None:
    """Spec 5.3: agents of earlier versions publish /.well-known/agent.json."""
    body = card(url="http://127.0.0.1:1/").to_json()
    with running(serving("/.well-known/agent.json", body)) as url:
        assert (await fetch_card(url)).name == "test agent"
        assert (await fetch_card(url + "/.well-known/agent.json")).name == "test agent"


async def test_card_from_a_file(tmp_path: Path) -> None:
    """Spec 5.3: a card may be configured locally."""
    path = tmp_path / "card.json"
    path.write_bytes(card(url="http://127.0.0.1:1/").to_json())
    assert (await fetch_card(str(path))).name == "test agent"


async def test_bad_card_names_each_problem(tmp_path: Path) -> None:
    """Spec 5.5: required fields; the error says which field and what is wrong."""
    path = tmp_path / "card.json"
    path.write_text(json.dumps({"name": "x", "url": "relative/path", "skills": "none"}))
    with pytest.raises(CardError) as raised:
        await fetch_card(str(path))
    problems = raised.value.problems
    assert "description: Field required" in problems
    assert any(p.startswith("skills:") for p in problems)
    bad_url = card(url="relative/path").to_json()
    path.write_bytes(bad_url)
    with pytest.raises(CardError, match="url: 'relative/path' is not an absolute"):
        await fetch_card(str(path))


async def test_no_card_is_not_an_agent() -> None:
    """Spec 5.3: a server with no card at either path is not an A2A agent."""
    with running(serving("/elsewhere", b"{}")) as url, pytest.raises(NotAnAgentError, match="404"):
        await fetch_card(url)


async def test_extended_card_fetched_with_credentials() -> None:
    """Spec 7.10, 5.5: with credentials, the client adopts the extended card."""
    public = card(supports_authenticated_extended_card=True)
    extended = card(name="test agent (extended)", supports_authenticated_extended_card=True)
    app = create_app(demo, public, extended_card=extended)
    async with connect(app) as anonymous:
        assert anonymous.card is not None
        assert anonymous.card.name == "test agent"
    async with connect(app, interceptors=[BearerAuth("t")]) as client:
        assert client.card is not None
        assert client.card.name == "test agent (extended)"


class _BrokenAfter(BearerAuth):
    """Credentials whose ``after`` hook fails with an error of its own (not an A2A one)."""

    async def after(self, call: ClientCall, result: Any) -> None:
        raise RuntimeError("the token store is down")


async def test_a_failed_extended_card_fetch_leaves_no_connection_open() -> None:
    """When adopting the extended card fails in any way (here an interceptor raising its
    own error, after the card came over a real socket), ``connect`` closes the client it
    made: no connection is left for the garbage collector to find open."""
    public = card(supports_authenticated_extended_card=True)
    app = create_app(demo, public, extended_card=card(name="extended"))
    with running(app) as url:
        try:
            await connect(url, interceptors=[_BrokenAfter("t")])
        except RuntimeError as error:
            failed = str(error)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            gc.collect()
    assert failed == "the token store is down"
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []


def test_selection_follows_the_agent_then_the_client() -> None:
    """Spec 5.6.3: the main url/preferredTransport first, then additionalInterfaces;
    only transports the client supports; the client's order when it asks for it."""
    agent_card = card(
        url="https://a/grpc",
        preferred_transport="GRPC",
        additional_interfaces=[
            AgentInterface(url="https://a/grpc", transport="GRPC"),
            AgentInterface(url="https://a/rest", transport="HTTP+JSON"),
            AgentInterface(url="https://a/rpc", transport="JSONRPC"),
        ],
    )
    chosen = candidate_interfaces(agent_card, ["jsonrpc", "grpc", "rest"])
    assert [i.url for i in chosen] == ["https://a/grpc", "https://a/rest", "https://a/rpc"]
    preferred = candidate_interfaces(agent_card, ["jsonrpc", "rest"], use_client_preference=True)
    assert [i.transport for i in preferred] == ["JSONRPC", "HTTP+JSON"]
    assert candidate_interfaces(agent_card, ["nothing"]) == []
    assert card_warnings(agent_card) == []


async def test_falls_back_to_the_next_interface() -> None:
    """Spec 5.6.3 (graceful degradation): an interface that cannot be reached is
    skipped for the next one the card declares."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    with running(create_demo_app()) as url:
        agent_card = card(
            url=dead,
            additional_interfaces=[AgentInterface(url=url + "/", transport="JSONRPC")],
        )
        async with connect(agent_card) as client:
            assert text_of(await client.send_message("echo me")) == "echo me"
            assert isinstance(client.transport, FallbackTransport)
            assert client.transport.interface.url == url + "/"


class _Unreachable:
    """A transport (of the kind an application may register) that never reaches its
    agent and fails to close."""

    def __init__(self, url: str, http_client: Any, **options: Any) -> None:
        self.url = url

    async def request(self, *args: Any) -> Any:
        raise AgentUnreachableError(f"{self.url} is down")

    def stream(self, *args: Any) -> Any:
        raise AgentUnreachableError(f"{self.url} is down")

    async def aclose(self) -> None:
        raise RuntimeError("could not close")


async def test_closing_the_fallback_closes_every_transport(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A dropped transport that fails to close does not leave the one in use open: the
    failure is raised after every transport is closed."""
    monkeypatch.setitem(_transport._TRANSPORTS, "UNREACHABLE", _Unreachable)
    with running(create_demo_app()) as url:
        fallback = FallbackTransport(
            [
                Candidate("http://127.0.0.1:9/", "UNREACHABLE", "0.3"),
                Candidate(url + "/", "JSONRPC", "0.3"),
            ]
        )
        client = Client(fallback)
        assert text_of(await client.send_message("echo me")) == "echo me"
        assert fallback.interface.transport == "JSONRPC"
        in_use = fallback._transports[1]
        assert isinstance(in_use, HTTPBinding)
        http = in_use.http
        assert not http.is_closed
        with pytest.raises(RuntimeError, match="could not close"):
            await client.aclose()
        assert http.is_closed


async def test_no_usable_interface() -> None:
    """Spec 5.6.3: a card with no transport the client speaks is refused up front."""
    with pytest.raises(Exception, match="offers JSONRPC"):
        await connect(card(url="http://x/"), transports=["GRPC-ONLY"])


def _v1_card(version: str) -> dict[str, object]:
    return {
        "name": "later agent",
        "description": "speaks a later A2A",
        "version": "1",
        "supportedInterfaces": [
            {"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": version}
        ],
        "capabilities": {"extendedAgentCard": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }


def test_a_v1_card_without_url_is_read() -> None:
    """v1.0.1 §4.4.1: a card with only ``supportedInterfaces`` (no ``url``) is accepted."""
    card = parse_card(_v1_card("1.0"))
    assert card.url == "http://x/"
    assert card.supports_authenticated_extended_card
    chosen = candidate_interfaces(card)
    assert [(c.url, c.transport, c.protocol) for c in chosen] == [("http://x/", "JSONRPC", "1.0")]


async def test_an_agent_of_an_unknown_version_is_refused_plainly() -> None:
    """v1.0.1 §3.6.3: an agent that speaks only a version parley does not is named so."""
    card = parse_card(_v1_card("2.0"))
    with pytest.raises(ClientError, match=r"the agent speaks only A2A 2\.0; this client speaks"):
        await connect(card)
    with pytest.raises(ClientError, match=r"speaks only A2A 1\.0; this client speaks 0\.3"):
        await connect(parse_card(_v1_card("1.0")), protocol="0.3")


async def test_reading_a_card_file_leaves_the_event_loop_free(tmp_path: Path) -> None:
    """The file is read in a worker thread: a card behind a pipe that the event loop
    itself fills is read, where a blocking read would stall the loop (a thread writes
    after 10 s so that a regression fails instead of hanging)."""
    import asyncio
    import os
    import threading

    fifo = tmp_path / "card.json"
    os.mkfifo(fifo)
    body = card(url="http://127.0.0.1:9/").to_json()
    writers: list[str] = []

    def write(who: str) -> None:
        writers.append(who)
        with fifo.open("wb") as pipe:
            pipe.write(body)

    rescue = threading.Timer(10, write, args=("a thread, after the loop stalled",))
    rescue.start()
    try:
        reading = asyncio.create_task(fetch_card(str(fifo)))
        await asyncio.sleep(0)  # fetch_card runs up to its first await
        if not writers:  # else the loop was stalled until the rescue wrote
            await asyncio.to_thread(write, "the event loop")
        fetched = await reading
    finally:
        rescue.cancel()
    assert writers[0] == "the event loop"
    assert fetched.name == card().name
