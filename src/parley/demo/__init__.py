"""The demo agent: the scenarios of the A2A documents, played without a model or network.

- "tell me a joke": a task that completes at once with the joke as an artifact;
- "write a report ...": a long report streamed as several chunks of one artifact;
- "book a flight ...": asks for the missing details (``input-required``), then for
  consent, then completes with the booking as a data artifact (A2A's "Life of a Task");
- "count to N" (N up to 300): one chunk a second, "1", "2", ... N, so there is time to
  cancel, resubscribe, or kill the process serving it;
- a message with a file part: the file comes back as a file artifact;
- anything else: a task that completes with an artifact echoing the text (the
  benchmark's echo agent).

Serve it with ``parley serve``; build it into your own app with ``create_demo_app()``.
"""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import AsyncIterator
from typing import Any

from parley.server import (
    A2AApp,
    AgentContext,
    InputRequired,
    Rejected,
    SigningKeys,
    agent,
    create_app,
)
from parley.server.push import PushSettings
from parley.stores import Store
from parley.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Part,
)

JOKE = "Why did the agent cross the network? To get to the other task."
REPORT_SECTIONS = (
    "# Report\n\n",
    "## Summary\nThe agents talked, and the tasks got done.\n\n",
    "## Findings\n1. Streams arrive in order.\n2. Nothing is lost on resubscribe.\n\n",
    "## Details\nEach chunk of this report is appended to one artifact.\n\n",
    "## Conclusion\nA2A lets agents built by different teams work together.\n",
)
ASK_DETAILS = "Where are you flying from, and on which date?"
ASK_CONSENT = "Please confirm consent to proceed with booking the flight"
COUNT_LIMIT = 300
COUNT_INTERVAL = 1.0
"""Seconds between two numbers of ``count to N``."""
_BOOK_FLIGHT = re.compile(r"\bbook\b.*\bflight\b", re.IGNORECASE)
_COUNT_TO = re.compile(r"\bcount to (\d+)\b", re.IGNORECASE)
"""Compiled once: ``re.search`` with a flag looks its pattern up in ``re``'s cache in
Python on every message (the flag's ``value`` read through ``enum``'s descriptor)."""


@agent
async def demo(ctx: AgentContext) -> AsyncIterator[str | list[Part] | Artifact | InputRequired]:
    """Plays the scenario the message asks for (see the module docs)."""
    asked = _last_question(ctx)
    text = ctx.text.strip()
    files = [p for p in ctx.message.parts if isinstance(p, FilePart)] if ctx.message else []
    if asked is not None or _BOOK_FLIGHT.search(text):
        async for step in _book_flight(ctx, asked):
            yield step
    elif counting := _COUNT_TO.search(text):
        async for number in _count(int(counting.group(1))):
            yield number
    elif files:
        for part in files:
            yield _file_back(part)
    elif "joke" in text.lower():
        yield JOKE
    elif "report" in text.lower():
        for section in REPORT_SECTIONS:
            await asyncio.sleep(0.05)
            yield section
    else:
        yield text


async def _count(limit: int) -> AsyncIterator[str]:
    if limit > COUNT_LIMIT:
        raise Rejected(f"I count to {COUNT_LIMIT} at most, not {limit}.")
    for number in range(1, limit + 1):
        await asyncio.sleep(COUNT_INTERVAL)
        yield f"{number}\n"


def _last_question(ctx: AgentContext) -> str | None:
    task = ctx.task
    if task is None or task.status.message is None:
        return None
    return " ".join(getattr(part, "text", "") for part in task.status.message.parts)


async def _book_flight(
    ctx: AgentContext, asked: str | None
) -> AsyncIterator[Artifact | InputRequired]:
    if asked is None:
        details = _flight_details([ctx.text])
        if details is None:
            yield InputRequired(ASK_DETAILS)
            return
    else:
        details = _flight_details(_texts(ctx))
    if asked is not None and asked.startswith(ASK_CONSENT):
        if ctx.text.strip().lower() in {"yes", "y", "i consent", "ok", "confirm"} or (
            "consent" in ctx.text.lower() and "not" not in ctx.text.lower()
        ):
            await ctx.progress("Booking the flight...")
            yield Artifact(
                artifact_id=f"{ctx.task_id}-booking",
                name="flight_confirmation",
                description="Flight booking confirmation.",
                parts=[
                    DataPart(
                        data={
                            "status": "booked",
                            "confirmation": ctx.task_id[:8].upper(),
                            **(details or {}),
                        }
                    )
                ],
            )
            return
        yield InputRequired(f"{ASK_CONSENT}? Reply yes to book, or cancel the task.")
        return
    if details is None:
        yield InputRequired(ASK_DETAILS)
        return
    yield InputRequired(
        f"{ASK_CONSENT} from {details['from']} to {details['to']} on {details['date']}? "
        "Reply yes to book."
    )


def _texts(ctx: AgentContext) -> list[str]:
    texts = [
        getattr(part, "text", "")
        for message in ctx.history
        if message.role == "user"
        for part in message.parts
    ]
    return [*texts, ctx.text]


_DETAILS = {
    "from": re.compile(r"\bfrom ([A-Z][\w-]+)"),
    "to": re.compile(r"\bto ([A-Z][\w-]+)"),
    "date": re.compile(r"\b(\d{4}-\d{2}-\d{2}|today|tomorrow|next \w+)\b", re.IGNORECASE),
}


def _flight_details(texts: list[str]) -> dict[str, str] | None:
    """Origin, destination and date from the user's messages, oldest first: the latest
    mention of each wins, so "from Oslo to Rome" corrects an earlier "to Helsinki"."""
    found: dict[str, str] = {}
    for text in reversed(texts):
        for name, pattern in _DETAILS.items():
            match = pattern.search(text) if name not in found else None
            if match is not None:
                found[name] = match.group(1)
    if len(found) < len(_DETAILS):
        return None
    return {name: found[name] for name in _DETAILS}


def _file_back(part: FilePart) -> Artifact:
    file = part.file
    name = file.name or "file"
    if isinstance(file, FileWithBytes):
        content = base64.b64decode(file.bytes)
        returned: FileWithBytes | FileWithUri = FileWithBytes(
            bytes=base64.b64encode(content).decode(), name=f"echo-{name}", mime_type=file.mime_type
        )
        note = f"Received {name}: {len(content)} bytes."
    else:
        returned = FileWithUri(uri=file.uri, name=f"echo-{name}", mime_type=file.mime_type)
        note = f"Received {name} by reference."
    return Artifact(
        artifact_id=f"echo-{name}",
        name=f"echo-{name}",
        description=note,
        parts=[FilePart(file=returned)],
    )


def demo_card(url: str = "") -> AgentCard:
    """The demo agent's card; an empty ``url`` is filled from the address served."""
    return AgentCard(
        name="parley demo agent",
        description="Plays the A2A scenarios: jokes, reports, flight booking, counting, "
        "files, echo.",
        url=url,
        version="0.1.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain", "application/octet-stream"],
        default_output_modes=["text/plain", "application/json", "application/octet-stream"],
        skills=[
            AgentSkill(
                id="joke",
                name="Joke",
                description="Tells a joke.",
                tags=["fun"],
                examples=["tell me a joke"],
            ),
            AgentSkill(
                id="report",
                name="Report",
                description="Streams a long report in chunks.",
                tags=["streaming"],
                examples=["write a report"],
            ),
            AgentSkill(
                id="flight",
                name="Flight booking",
                description="Books a flight after asking for details and consent.",
                tags=["multi-turn"],
                examples=["book a flight to Helsinki"],
            ),
            AgentSkill(
                id="count",
                name="Count",
                description=f"Counts to N (at most {COUNT_LIMIT}), one number a second: "
                "long enough to cancel, resubscribe or move between processes.",
                tags=["streaming", "long-running"],
                examples=["count to 30"],
            ),
            AgentSkill(
                id="file",
                name="File round trip",
                description="Sends a file back.",
                tags=["files"],
                input_modes=["application/octet-stream"],
                output_modes=["application/octet-stream"],
            ),
            AgentSkill(id="echo", name="Echo", description="Echoes any other text.", tags=["echo"]),
        ],
    )


def create_demo_app(
    *,
    url: str = "",
    task_store: Store | None = None,
    push: PushSettings | None = None,
    signing_keys: SigningKeys | None = None,
    **options: Any,
) -> A2AApp:
    """The demo agent as an ASGI app (it declares push notifications); ``options`` go
    to ``create_app``."""
    return create_app(
        demo,
        demo_card(url),
        task_store=task_store,
        push=push,
        signing_keys=signing_keys,
        **options,
    )


__all__ = ["create_demo_app", "demo", "demo_card"]
