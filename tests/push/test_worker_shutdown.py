"""Closing the push worker just as it is woken (new outbox entries, or a delivery that
ended: closing cancels the ones in flight, and each one's end wakes the worker) stops
it. Python 3.11's ``asyncio.wait_for`` swallowed a cancellation that came with the
wake-up, and the worker's loop, and so the app's shutdown, never ended."""

from __future__ import annotations

import asyncio

import anyio

from parley.demo import create_demo_app


async def test_closing_the_worker_as_it_wakes_up_stops_it() -> None:
    for _ in range(5):
        app = create_demo_app()
        async with app.lifespan():
            push = app.handler.push
            assert push is not None
            await anyio.sleep(0.01)  # its loop waits to be woken
            push.worker.wake()
            await asyncio.sleep(0)  # the wake-up is on its way to the loop
            with anyio.fail_after(5):
                await push.worker.aclose()
