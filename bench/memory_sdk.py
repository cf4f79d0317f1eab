"""Memory per stored task in a2a-sdk's InMemoryTaskStore, measured in process.

Runs in the interop venv. Sends echo messages through ``DefaultRequestHandler``
(``on_message_send``, the path its JSON-RPC app calls) and reports the memory that stays
per task, measured as for parley (``memory_probe``). Prints JSON.

    .interop/venv/bin/python bench/memory_sdk.py [--tasks 20000]
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from a2a.types import Message, MessageSendParams, Part, Role, TextPart
from memory_probe import main
from sdk_echo import handler, store


async def sender() -> tuple[Callable[[], Awaitable[object]], Callable[[], Awaitable[int]]]:
    async def send() -> object:
        return await handler.on_message_send(_params())

    async def stored() -> int:
        return len(store.tasks)

    return send, stored


def _params() -> MessageSendParams:
    return MessageSendParams(
        message=Message(
            message_id=str(uuid.uuid4()),
            role=Role.user,
            parts=[Part(root=TextPart(text="hello, bench"))],
        )
    )


if __name__ == "__main__":
    main(sender)
