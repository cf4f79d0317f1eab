"""Memory per stored task in a2a-sdk's InMemoryTaskStore, measured in process.

Runs in the interop venv. Sends N echo messages through ``DefaultRequestHandler``
(``on_message_send``, the path its JSON-RPC app calls), then reports the traced-memory
growth per task after a full collection. Prints JSON.

    .interop/venv/bin/python bench/memory_sdk.py [--tasks 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import tracemalloc
import uuid

from a2a.types import Message, MessageSendParams, Part, Role, TextPart
from sdk_echo import handler, store


async def measure(tasks: int) -> dict[str, float]:
    await handler.on_message_send(_params())
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(tasks):
        await handler.on_message_send(_params())
    await asyncio.sleep(0.1)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {
        "tasks": tasks,
        "stored": len(store.tasks),
        "bytes_per_task": round((after - before) / tasks),
    }


def _params() -> MessageSendParams:
    return MessageSendParams(
        message=Message(
            message_id=str(uuid.uuid4()),
            role=Role.user,
            parts=[Part(root=TextPart(text="hello, bench"))],
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20_000)
    print(json.dumps(asyncio.run(measure(parser.parse_args().tasks))))


if __name__ == "__main__":
    main()
