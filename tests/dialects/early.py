"""What the 2025-early dialect tests share: an agent with known answers, its card, and
requests written as the dialect's examples write them."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx

from parley.server import (
    A2AApp,
    EventSink,
    RequestContext,
    TaskUpdater,
    create_app,
)
from parley.types import (
    AgentCapabilities,
    AgentCard,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
)

_ids = itertools.count(100)


class EarlyAgent:
    """Answers as the dialect's examples show: a ``working`` status with a message, one
    artifact, ``completed``. ``wait`` works until canceled; ``ask`` asks for input, and
    the answer completes the task; ``draft`` makes an artifact before it asks."""

    def __init__(self) -> None:
        self.accepted: list[list[str] | None] = []

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater.for_context(events, context)
        text = context.get_user_input()
        configuration = context.configuration
        self.accepted.append(configuration.accepted_output_modes if configuration else None)
        if text == "wait":
            await updater.start_work("Waiting until canceled")
            await asyncio.Event().wait()
        if text == "ask" and context.task is None:
            await updater.requires_input("Which city?")
            return
        if text == "draft" and context.task is None:
            await updater.add_artifact("A first draft", name="draft")
            await updater.requires_input("Is the draft right?")
            return
        await updater.start_work("Working on it")
        await updater.add_artifact(f"You said: {text}", name="answer")
        await updater.complete()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        await TaskUpdater.for_context(events, context).cancel()


def early_card() -> AgentCard:
    return AgentCard(
        name="Early agent",
        description="Answers as the 2025-early specification shows.",
        url="",
        version="1.2.3",
        provider=AgentProvider(organization="Example Org", url="https://example.org"),
        documentation_url="https://example.org/docs",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Says what you said.",
                tags=["demo"],
                examples=["hello"],
                input_modes=["text/plain"],
                output_modes=["text/plain"],
            )
        ],
    )


def secured_card() -> AgentCard:
    """The early agent's card, asking for a bearer token."""
    return early_card().model_copy(
        update={
            "security_schemes": {"token": HTTPAuthSecurityScheme(scheme="Bearer")},
            "security": [{"token": []}],
        }
    )


def early_app() -> tuple[A2AApp, EarlyAgent]:
    agent = EarlyAgent()
    return create_app(agent, early_card()), agent


def text_message(text: str, role: str = "user") -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "text": text}]}


def send_params(task_id: str, text: str, session: str = "session-1", **more: Any) -> dict[str, Any]:
    return {"id": task_id, "sessionId": session, "message": text_message(text), **more}


def request(method: str, params: Any, request_id: Any = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": next(_ids) if request_id is None else request_id,
        "method": method,
        "params": params,
    }


async def call(http: httpx.AsyncClient, body: dict[str, Any] | bytes) -> dict[str, Any]:
    """POST one request; the answer must be a JSON-RPC response with HTTP 200."""
    if isinstance(body, bytes):
        response = await http.post("/", content=body, headers={"content-type": "application/json"})
    else:
        response = await http.post("/", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    answer: dict[str, Any] = response.json()
    assert answer["jsonrpc"] == "2.0"
    return answer


async def stream(http: httpx.AsyncClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST a streaming request; every ``data:`` of the SSE answer, parsed."""
    events: list[dict[str, Any]] = []
    async with http.stream("POST", "/", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
    return events


def without_timestamps(value: Any) -> Any:
    """``value`` with every ``timestamp`` checked to be a string and removed."""
    if isinstance(value, dict):
        if "timestamp" in value:
            assert isinstance(value["timestamp"], str)
            assert value["timestamp"]
        return {k: without_timestamps(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [without_timestamps(item) for item in value]
    return value


def has_no_v0_3_member(value: Any) -> bool:
    """No ``kind``, ``contextId``, ``messageId``, ``artifactId`` anywhere in ``value``."""
    text = json.dumps(value)
    return not any(f'"{name}"' in text for name in ("kind", "contextId", "messageId", "artifactId"))
