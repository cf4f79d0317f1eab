"""Memory per stored task in parley's in-memory store, measured in process.

Sends N echo messages through the request handler (the same path a binding calls),
then reports the traced-memory growth per task after a full collection. Prints JSON.

    python bench/memory_parley.py [--tasks 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import tracemalloc
import uuid

from bench.parley_echo import card, echo
from parley.server import RequestHandler
from parley.types import Message, MessageSendParams, Role, TextPart


async def measure(tasks: int) -> dict[str, float]:
    handler = RequestHandler(echo, card)
    await handler.send_message(_params())  # warm up: imports, caches
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(tasks):
        await handler.send_message(_params())
    await asyncio.sleep(0.1)  # let finished runs release their live state
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    stored = len(handler.task_store)  # type: ignore[arg-type]
    return {"tasks": tasks, "stored": stored, "bytes_per_task": round((after - before) / tasks)}


def _params() -> MessageSendParams:
    return MessageSendParams(
        message=Message(
            message_id=str(uuid.uuid4()), role=Role.user, parts=[TextPart(text="hello, bench")]
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20_000)
    print(json.dumps(asyncio.run(measure(parser.parse_args().tasks))))


if __name__ == "__main__":
    main()
