"""The demo agent plays the scenarios of the A2A documents (A2A's "Life of a Task", spec 9)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import httpx
import pytest

from parley.demo import JOKE, REPORT_SECTIONS, create_demo_app
from tests.server.rpc import result, send, sse, user_message


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_demo_app()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://demo.test") as http:
        yield http
    await app.handler.aclose()


async def test_joke_completes_at_once(client: httpx.AsyncClient) -> None:
    """Spec 9.2: a simple question answered by a task that completes quickly."""
    task = await send(client, "tell me a joke")
    assert task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": JOKE}]


async def test_report_streams_as_chunks_of_one_artifact(client: httpx.AsyncClient) -> None:
    """Spec 7.2.3: a long artifact streamed in chunks appended to one artifact id."""
    events = await sse(client, "message/stream", {"message": user_message("write a report")})
    chunks = [a["result"] for _, a in events if a["result"]["kind"] == "artifact-update"]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == list(REPORT_SECTIONS)
    assert len({c["artifact"]["artifactId"] for c in chunks}) == 1
    assert [c.get("append", False) for c in chunks] == [False] + [True] * (len(chunks) - 1)
    assert events[-1][1]["result"]["status"]["state"] == "completed"


async def test_flight_booking_asks_details_then_consent(client: httpx.AsyncClient) -> None:
    """ "Life of a Task": input-required for missing details, then consent, then a data artifact."""
    first = await send(client, "Book a flight to Helsinki")
    assert first["status"]["state"] == "input-required"
    assert "flying from" in first["status"]["message"]["parts"][0]["text"]
    second = await send(client, "from Berlin on 2026-12-01", taskId=first["id"])
    assert second["status"]["state"] == "input-required"
    question = second["status"]["message"]["parts"][0]["text"]
    assert "consent" in question
    assert "Berlin" in question
    assert "Helsinki" in question
    done = await send(client, "yes", taskId=first["id"])
    assert done["status"]["state"] == "completed"
    booking = done["artifacts"][0]["parts"][0]
    assert booking["kind"] == "data"
    assert booking["data"]["status"] == "booked"
    assert booking["data"]["to"] == "Helsinki"
    assert booking["data"]["from"] == "Berlin"


async def test_a_corrected_trip_replaces_the_earlier_one(client: httpx.AsyncClient) -> None:
    """ "Life of a Task" (multi-turn): each detail comes from the user's latest mention of it."""
    first = await send(client, "book a flight to Helsinki")
    second = await send(client, "from Oslo to Rome", taskId=first["id"])
    assert second["status"]["state"] == "input-required"
    assert "date" in second["status"]["message"]["parts"][0]["text"]
    third = await send(client, "tomorrow", taskId=first["id"])
    question = third["status"]["message"]["parts"][0]["text"]
    assert "from Oslo to Rome on tomorrow" in question
    assert "Helsinki" not in question
    done = await send(client, "yes", taskId=first["id"])
    booking = done["artifacts"][0]["parts"][0]["data"]
    assert (booking["from"], booking["to"], booking["date"]) == ("Oslo", "Rome", "tomorrow")


async def test_file_comes_back_as_a_file_artifact(client: httpx.AsyncClient) -> None:
    content = b"\x00\x01parley"
    message = {
        "role": "user",
        "messageId": "file-1",
        "parts": [
            {
                "kind": "file",
                "file": {
                    "name": "x.bin",
                    "mimeType": "application/octet-stream",
                    "bytes": base64.b64encode(content).decode(),
                },
            }
        ],
    }
    task = await result(client, "message/send", {"message": message})
    artifact = task["artifacts"][0]
    assert artifact["name"] == "echo-x.bin"
    file = artifact["parts"][0]["file"]
    assert base64.b64decode(file["bytes"]) == content
    assert file["mimeType"] == "application/octet-stream"


async def test_anything_else_is_echoed(client: httpx.AsyncClient) -> None:
    task = await send(client, "ping 42")
    assert task["artifacts"][0]["parts"][0]["text"] == "ping 42"
