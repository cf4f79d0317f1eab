"""Memory per stored task in parley's in-memory store, measured in process.

Sends echo messages through the request handler (the same path a binding calls) and
reports the memory that stays per task (``memory_probe``: tracemalloc and resident
memory, each at five points, the largest figure). Each stored task is what an echo send
makes: its history (the message sent), its artifact and its event log; the count of
stored tasks, and that the last one is whole, are checked. Prints JSON.

    python bench/memory_parley.py [--tasks 20000]
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from bench.memory_probe import main
from bench.parley_echo import card, echo
from parley.server import RequestHandler
from parley.stores import MemoryStore
from parley.types import Message, MessageSendParams, Role, Task, TextPart


async def sender() -> tuple[Callable[[], Awaitable[object]], Callable[[], Awaitable[int]]]:
    store = MemoryStore()
    handler = RequestHandler(echo, card, task_store=store)
    sent: list[Task] = []

    async def send() -> object:
        result = await handler.send_message(_params())
        assert isinstance(result, Task)
        sent[:] = [result]
        return result

    async def stored() -> int:
        found = await store.get(sent[0].id)
        assert found is not None
        assert found.task.history
        assert found.task.artifacts
        assert len(await store.events(sent[0].id)) >= 3
        return len(store)

    return send, stored


def _params() -> MessageSendParams:
    return MessageSendParams(
        message=Message(
            message_id=str(uuid.uuid4()), role=Role.user, parts=[TextPart(text="hello, bench")]
        )
    )


if __name__ == "__main__":
    main(sender)
