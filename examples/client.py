import asyncio
import sys

from parley.client import connect, text_of


async def main(url: str) -> None:
    async with connect(url) as client:  # resolves the card, picks a transport
        task = await client.send_message("tell me a joke")  # waits for the task's end
        print(text_of(task))
        async for event in client.stream_message("write a report"):
            print(event.kind)  # task, status-update, artifact-update, ...


asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"))
