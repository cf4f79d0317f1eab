"""The lifecycle owner (``TaskRuns``): a task's run slot and holds are given back on
every way out of the owner's context managers, and a started run keeps its own until
it ends."""

from __future__ import annotations

import asyncio

import pytest

from parley.server import AgentContext, RequestContext, agent
from parley.server.tasks._live import Phase
from parley.server.tasks._runs import TaskRuns
from parley.stores import MemoryStore
from parley.types import Message, Role, Task, TaskState, TaskStatus, TextPart

BOUND = 5.0


def _asking() -> Task:
    return Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.input_required))


def _answer() -> Message:
    return Message(
        message_id="m2",
        role=Role.user,
        parts=[TextPart(text="Oslo")],
        task_id="t1",
        context_id="c1",
    )


async def _runs(gate: asyncio.Event) -> TaskRuns:
    @agent
    async def waits(ctx: AgentContext) -> str:
        await gate.wait()
        return f"heard {ctx.text}"

    store = MemoryStore()
    await store.save(_asking(), 0)
    return TaskRuns(waits, store)


async def test_a_turn_is_given_back_on_every_way_out_of_its_block() -> None:
    runs = await _runs(asyncio.Event())
    async with runs.hold("t1") as live:

        async def refused() -> None:
            async with runs.turn(live) as turn:
                assert live.turn is turn
                raise RuntimeError("the caller's check failed")

        with pytest.raises(RuntimeError):
            await refused()
        assert live.turn is None
        assert live.phase is Phase.IDLE

        entered = asyncio.Event()

        async def held_until_canceled() -> None:
            async with runs.turn(live):
                entered.set()
                await asyncio.sleep(BOUND * 10)

        waiting = asyncio.create_task(held_until_canceled())
        await asyncio.wait_for(entered.wait(), BOUND)
        assert live.turn is not None
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert live.turn is None
        assert live.phase is Phase.IDLE

        async with runs.turn(live) as turn:
            assert turn is not None
        assert live.turn is None
    assert not runs.is_live("t1")


async def test_a_started_run_keeps_its_turn_and_hold_until_it_ends() -> None:
    gate = asyncio.Event()
    runs = await _runs(gate)
    async with runs.hold("t1") as live, runs.turn(live) as turn:
        assert turn is not None
        context = RequestContext(_answer(), "t1", "c1", None)
        runs.start(live, turn, context)
    assert runs.is_live("t1")  # the run holds it
    assert live.turn is turn
    gate.set()
    ended = await asyncio.wait_for(live.log.first(0, lambda event: True), BOUND)
    assert ended is not None
    for _ in range(100):
        if not runs.is_live("t1"):
            break
        await asyncio.sleep(0.01)
    assert not runs.is_live("t1")
    assert live.turn is None
    stored = await runs.store.get("t1")
    assert stored is not None
    assert stored.task.status.state is TaskState.completed
