"""A live task's publishing gate: one publish at a time, in the order they came."""

from __future__ import annotations

import asyncio

import pytest

from parley.protocol import InvalidParamsError
from parley.server.tasks._events import EventLog
from parley.server.tasks._live import MOVES, Gate, LiveTask, Move, Phase, move


async def test_a_free_gate_is_taken_at_once_and_a_held_one_is_not() -> None:
    gate = Gate()
    assert gate.try_take()
    assert not gate.try_take()
    gate.release()
    assert gate.try_take()


async def test_waiters_get_the_gate_in_the_order_they_came_and_no_one_slips_in() -> None:
    gate = Gate()
    assert gate.try_take()
    order: list[int] = []

    async def publish(number: int) -> None:
        await gate.take()
        order.append(number)
        await asyncio.sleep(0)
        gate.release()

    waiting = [asyncio.create_task(publish(number)) for number in range(5)]
    await asyncio.sleep(0)
    gate.release()  # handed to the first waiter: still held
    assert not gate.try_take()
    await asyncio.gather(*waiting)
    assert order == [0, 1, 2, 3, 4]
    assert gate.try_take()


async def test_a_waiter_canceled_while_waiting_is_skipped() -> None:
    gate = Gate()
    assert gate.try_take()
    first = asyncio.create_task(gate.take())
    second = asyncio.create_task(gate.take())
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    gate.release()
    await second  # the gate went past the canceled one
    assert not gate.try_take()
    gate.release()
    assert gate.try_take()


async def test_a_waiter_canceled_after_the_gate_was_handed_to_it_passes_it_on() -> None:
    gate = Gate()
    assert gate.try_take()
    first = asyncio.create_task(gate.take())
    second = asyncio.create_task(gate.take())
    await asyncio.sleep(0)
    gate.release()  # handed to ``first``, which has not run yet
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    await second
    gate.release()
    assert gate.try_take()


async def test_async_with_holds_the_gate_for_the_block() -> None:
    gate = Gate()
    async with gate:
        assert not gate.try_take()
    assert gate.try_take()


async def test_a_live_task_is_its_own_publishing_gate_and_starts_free() -> None:
    live = LiveTask("t", "c", None, EventLog())
    assert live.publishing is live
    assert (live.turn, live.last_turn, live.holders, live.broken) == (None, None, 0, False)
    assert (live.push_configs, live.push_changes, live.owner, live.received) == (None, 0, None, 0)
    assert live.try_take()
    assert not live.publishing.try_take()
    live.release()
    async with live.publishing:
        assert not live.try_take()
    assert live.try_take()


def test_a_run_slot_is_taken_once_and_freed_once() -> None:
    live = LiveTask("t", "c", None, EventLog())
    assert live.phase.value == "idle"
    turn = live.begin_turn()
    assert live.phase is Phase.RUNNING
    assert live.turn is turn
    with pytest.raises(InvalidParamsError, match="still working on an earlier message"):
        live.begin_turn()
    turn.end()
    turn.end()  # freeing twice frees once
    assert live.phase.value == "idle"
    assert live.turn is None
    assert live.begin_turn() is not turn


def test_a_broken_task_takes_no_run_and_stays_broken() -> None:
    live = LiveTask("t", "c", None, EventLog())
    turn = live.begin_turn()
    move(live, Move.BREAK)
    turn.end()
    assert live.phase is Phase.BROKEN
    assert live.turn is None
    with pytest.raises(InvalidParamsError, match="send again"):
        live.begin_turn()
    assert live.phase is Phase.BROKEN


def test_every_phase_says_what_each_move_does() -> None:
    assert set(MOVES) == set(Phase)
    for phase, moves in MOVES.items():
        assert moves[Move.END] in Phase, phase
        assert moves[Move.BREAK] is Phase.BROKEN, phase
    assert [phase for phase, moves in MOVES.items() if Move.BEGIN in moves] == [Phase.IDLE]
