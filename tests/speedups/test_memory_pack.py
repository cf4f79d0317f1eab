"""A finished task in the memory store gives back exactly what was stored.

The memory store packs a finished task's snapshot and event log into one record, with
events told against the snapshot and ids and field names shortened (``_memory_pack``).
Each case folds its events with the server's reducer (as ``TaskRuns.publish`` does),
appends them one by one with the snapshot on the last, and compares what the store gives
back after the task ended with what it gave while it ran: equal objects, equal JSON.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley._speedups import _memory_pack
from parley._speedups._v03_json import written_pieces
from parley.protocol import apply
from parley.server import RequestHandler, agent
from parley.stores import MemoryStore, StoredEvent
from parley.types import (
    AgentCapabilities,
    AgentCard,
    Artifact,
    DataPart,
    Event,
    Message,
    MessageSendParams,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

CONTROL = "".join(chr(code) for code in range(32))
_NOT_ASCII = {"task_id": "tâche", "context_id": "contexte ✓"}


def _message(message_id: str, text: str, role: Role = Role.user, **ids: str) -> Message:
    return Message(message_id=message_id, role=role, parts=[TextPart(text=text)], **ids)


def _status(task_id: str, context_id: str, state: TaskState, **more: Any) -> TaskStatusUpdateEvent:
    final = more.pop("final", state is TaskState.completed)
    status = TaskStatus(state=state, timestamp="2026-11-23T10:00:00.000001+00:00", **more)
    return TaskStatusUpdateEvent(task_id=task_id, context_id=context_id, status=status, final=final)


def _ended(task_id: str, context_id: str, timestamp: str | None) -> TaskStatusUpdateEvent:
    status = TaskStatus(state=TaskState.completed, timestamp=timestamp)
    return TaskStatusUpdateEvent(task_id=task_id, context_id=context_id, status=status, final=True)


def _artifact(task_id: str, context_id: str, *parts: Any, **more: Any) -> TaskArtifactUpdateEvent:
    artifact_id = more.pop("artifact_id", "a1")
    name = more.pop("name", "answer")
    artifact = Artifact(artifact_id=artifact_id, name=name, parts=list(parts))
    return TaskArtifactUpdateEvent(
        task_id=task_id, context_id=context_id, artifact=artifact, **more
    )


def _start(task_id: str, context_id: str, history: list[Message] | None, **more: Any) -> Task:
    status = TaskStatus(state=TaskState.working, timestamp="2026-11-23T10:00:00+00:00")
    return Task(id=task_id, context_id=context_id, status=status, history=history, **more)


def _cases() -> dict[str, tuple[str, str, list[Event]]]:
    t, c = "task-1", "ctx-1"
    asked = _message("m1", "hello", task_id=t, context_id=c)
    text = TextPart(text="chunk")
    return {
        "echo": (
            t,
            c,
            [_start(t, c, [asked]), _artifact(t, c, text), _status(t, c, TaskState.completed)],
        ),
        "chunks": (
            t,
            c,
            [
                _start(t, c, [asked]),
                _artifact(t, c, TextPart(text="one ")),
                _artifact(t, c, TextPart(text="two "), append=True),
                _artifact(t, c, TextPart(text="three"), append=True, last_chunk=True),
                _status(t, c, TaskState.completed),
            ],
        ),
        "asked for input, then answered": (
            t,
            c,
            [
                _start(t, c, [asked]),
                _status(
                    t, c, TaskState.input_required, message=_message("q", "which?", Role.agent)
                ),
                _message("m2", "that one", task_id=t, context_id=c),
                _status(t, c, TaskState.working),
                _status(
                    t, c, TaskState.failed, message=_message("e", "no", Role.agent), final=True
                ),
            ],
        ),
        "numbers that compare equal but print differently": (
            t,
            c,
            [
                _start(t, c, [asked], metadata={"n": 1}),
                _artifact(t, c, DataPart(data={"x": 1})),
                _artifact(t, c, DataPart(data={"x": 1.0})),
                _artifact(t, c, DataPart(data={"x": True}), metadata={"m": 1.0}),
                _status(t, c, TaskState.completed),
            ],
        ),
        "a Task event replaces all": (
            t,
            c,
            [
                Task(id=t, context_id=c, status=TaskStatus(state=TaskState.submitted)),
                Task(id=t, context_id=c, status=TaskStatus(state=TaskState.working, timestamp="")),
                Task(
                    id=t,
                    context_id=c,
                    status=TaskStatus(state=TaskState.working, timestamp="now\nthen \x01"),
                ),
                Task(
                    id=t,
                    context_id=c,
                    status=TaskStatus(state=TaskState.working, message=_message("w", "busy")),
                    history=[asked],
                ),
                _start(t, c, []),
                _artifact(t, c, text, artifact_id="old"),
                _start(t, c, [asked], artifacts=[Artifact(artifact_id="new", parts=[text])]),
                _artifact(t, c, text, artifact_id="new"),
                _status(t, c, TaskState.canceled, final=True),
            ],
        ),
        "ids inside the content, control characters": (
            "1",
            "2",
            [
                _start("1", "2", [_message("12", "1 2 12 21 \x01\x02\n" + CONTROL)]),
                _artifact("1", "2", TextPart(text='{"kind":"task","id":"' + CONTROL), name="1"),
                _status("1", "2", TaskState.rejected, message=_message("2", "\x03\n"), final=True),
            ],
        ),
        "an event of another task": (
            t,
            c,
            [
                _start(t, c, [asked]),
                _artifact("other", c, text),
                _status(t, "other", TaskState.working),
                _status(t, c, TaskState.completed),
            ],
        ),
        # the commonest task's JSON is shortened without a search (``_short``), anything
        # else it does not expect by the search (``_shorten``)
        "a timestamp JSON escapes": (t, c, [_start(t, c, [asked]), _ended(t, c, 'now "\\')]),
        "a timestamp not ASCII": (t, c, [_start(t, c, [asked]), _ended(t, c, "maintenant é")]),
        "no timestamp": (t, c, [_start(t, c, [asked]), _ended(t, c, None)]),
        "a text JSON escapes": (
            t,
            c,
            [_start(t, c, [_message("m1", 'say "hi"\\\n\x7f', task_id=t, context_id=c)])],
        ),
        "a text, a timestamp and ids not ASCII": (
            "tâche",
            "contexte ✓",
            [_start("tâche", "contexte ✓", [_message("mé", "héllo ✓", Role.user, **_NOT_ASCII)])],
        ),
        "a message with metadata": (
            t,
            c,
            [_start(t, c, [asked.model_copy(update={"metadata": {"k": 1}})])],
        ),
        "a message of two parts, or a data part": (
            t,
            c,
            [
                _start(t, c, [asked.model_copy(update={"parts": [text, text]})]),
                _start(t, c, [asked.model_copy(update={"parts": [DataPart(data={"x": 1})]})]),
            ],
        ),
        "the agent's message, another task's": (
            t,
            c,
            [
                _start(t, c, [_message("m1", "hello", Role.agent, task_id=t, context_id=c)]),
                _start(t, c, [_message("m1", "hello", task_id="other", context_id=c)]),
            ],
        ),
        "two messages": (
            t,
            c,
            [_start(t, c, [asked, _message("m2", "more", task_id=t, context_id=c)])],
        ),
        "more events than the sequence numbers kept as text": (
            t,
            c,
            [
                _start(t, c, [asked]),
                *(_artifact(t, c, TextPart(text=f"{n}"), append=n > 0) for n in range(70)),
                _status(t, c, TaskState.completed),
            ],
        ),
    }


@pytest.mark.parametrize("case", list(_cases()))
async def test_a_finished_task_gives_back_its_snapshot_and_events(case: str) -> None:
    task_id, _, events = _cases()[case]
    store = MemoryStore()
    task: Task | None = None
    for sequence, event in enumerate(events, start=1):
        task = apply(task, event)
        assert task is not None
        ends = sequence == len(events)
        snapshot = task if ends else None
        if not ends:
            await store.append(task_id, (StoredEvent(sequence, event),))
        else:
            running = await store.events(task_id)
            await store.append(task_id, (StoredEvent(sequence, event),), snapshot=snapshot)
    assert task is not None
    stored = await store.events(task_id)
    assert stored == [*running, StoredEvent(len(events), events[-1])]
    assert [e.event.to_json() for e in stored] == [e.to_json() for e in events]
    assert [e.sequence for e in await store.events(task_id, after=2)] == list(
        range(3, len(events) + 1)
    )
    found = await store.get(task_id)
    assert found is not None
    assert found.task.to_json() == task.to_json()
    assert found.sequence == len(events) == await store.last_sequence(task_id)


@pytest.mark.parametrize("case", list(_cases()))
async def test_a_task_begun_and_finished_in_one_append_gives_back_the_same(case: str) -> None:
    """All of a task's events in one write with its final snapshot (a blocking send to a
    simple agent): packed at once, read back whole."""
    task_id, _, events = _cases()[case]
    store = MemoryStore()
    task: Task | None = None
    for event in events:
        task = apply(task, event)
    assert task is not None
    logged = [StoredEvent(sequence, event) for sequence, event in enumerate(events, start=1)]
    await store.append(task_id, logged, snapshot=task)
    stored = await store.events(task_id)
    assert stored == logged
    assert [e.event.to_json() for e in stored] == [e.to_json() for e in events]
    found = await store.get(task_id)
    assert found is not None
    assert found.task.to_json() == task.to_json()
    assert found.sequence == len(events) == await store.last_sequence(task_id)


async def test_a_finished_task_appended_to_again_keeps_its_log() -> None:
    task_id, _, events = _cases()["echo"]
    store = MemoryStore()
    task: Task | None = None
    for sequence, event in enumerate(events, start=1):
        task = apply(task, event)
        last = sequence == len(events)
        await store.append(
            task_id, (StoredEvent(sequence, event),), snapshot=task if last else None
        )
    later = _status(task_id, "ctx-1", TaskState.completed)
    await store.append(task_id, (StoredEvent(4, later),))
    assert [e.event.to_json() for e in await store.events(task_id)] == [
        e.to_json() for e in [*events, later]
    ]


async def test_tasks_sent_through_the_handler_read_back_whole() -> None:
    @agent
    async def echo(ctx: Any) -> Any:
        yield ctx.text
        yield " again"

    card = AgentCard(
        name="echo",
        description="echo",
        url="",
        version="1",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[],
    )
    store = MemoryStore()
    handler = RequestHandler(echo, card, task_store=store)
    sent = _message("m1", "hi")
    result = await handler.send_message(MessageSendParams(message=sent))
    assert isinstance(result, Task)
    found = await store.get(result.id)
    assert found is not None
    assert found.task.status.state is TaskState.completed
    assert found.task.history is not None
    assert found.task.history[0].message_id == "m1"
    events = [e.event for e in await store.events(result.id)]
    folded: Task | None = None
    for event in events:
        folded = apply(folded, event)
    assert folded is not None
    assert folded.to_json() == found.task.to_json()
    assert isinstance(events[-1], TaskStatusUpdateEvent)
    assert events[-1].final


@pytest.mark.parametrize("case", list(_cases()))
def test_the_commonest_task_is_shortened_without_a_search_as_the_search_would(case: str) -> None:
    """``_short`` makes what ``_shorten`` makes of a task's JSON, or declines."""
    task_id, context_id, events = _cases()[case]
    task: Task | None = None
    for event in events:
        task = apply(task, event)
    assert task is not None
    json, ids = task.to_json(), (task_id.encode(), context_id.encode())
    short = _memory_pack._short(json, task, *ids)
    declined = {
        "asked for input, then answered",
        "ids inside the content, control characters",
        "a timestamp JSON escapes",
        "no timestamp",
        "a text JSON escapes",
        "a message with metadata",
        "a message of two parts, or a data part",
        "the agent's message, another task's",
        "two messages",
    }
    assert (short is None) is (case in declined)
    if short is not None:
        assert short == _memory_pack._shorten(json, *ids)


@pytest.mark.parametrize("case", list(_cases()))
def test_the_record_cut_from_the_written_pieces_is_the_shortened_json(case: str) -> None:
    """``_cut`` makes what ``_short`` makes of the joined pieces, or declines."""
    task_id, context_id, events = _cases()[case]
    task: Task | None = None
    for event in events:
        task = apply(task, event)
    assert task is not None
    pieces = written_pieces(task)
    cut = None if pieces is None else _memory_pack._cut(pieces, task)
    ids = task_id.encode(), context_id.encode()
    short = _memory_pack._short(task.to_json(), task, *ids)
    assert cut is None or cut == short is not None
    cut_cases = {
        "echo",
        "chunks",
        "a Task event replaces all",
        "an event of another task",
        "a timestamp not ASCII",
        "more events than the sequence numbers kept as text",
    }
    assert (cut is None) is (case not in cut_cases)


_ECHOED = st.text() | st.sampled_from(["hello", "", 'say "hi"', "\x01\n", "ünï ✓", "\ud800"])


@given(
    text=_ECHOED,
    answer=st.none() | _ECHOED,
    ids=st.tuples(_ECHOED, _ECHOED, _ECHOED, _ECHOED, _ECHOED),
    stamp=_ECHOED,
    role=st.sampled_from(Role),
    state=st.sampled_from(TaskState),
    same=st.booleans(),
)
def test_any_commonest_task_is_cut_as_it_is_shortened(
    text: str,
    answer: str | None,
    ids: tuple[str, str, str, str, str],
    stamp: str,
    role: Role,
    state: TaskState,
    same: bool,
) -> None:
    """Whatever its values, the commonest task's record is cut from its pieces as
    ``_short`` shortens its JSON, byte for byte, and gives its JSON back; or it is left
    to ``_short``."""
    task_id, context_id, message_id, artifact_id, name = ids
    asked = Message(
        message_id=message_id,
        role=role,
        parts=[TextPart(text=text)],
        context_id=context_id,
        task_id=task_id if same else message_id,
    )
    told = Artifact(
        artifact_id=artifact_id,
        parts=[TextPart(text=text if answer is None else answer)],
        name=name,
    )
    status = TaskStatus(state=state, timestamp=stamp)
    task = Task(id=task_id, context_id=context_id, status=status, history=[asked], artifacts=[told])
    pieces = written_pieces(task)
    assert pieces is not None
    cut = _memory_pack._cut(pieces, task)
    if cut is None:
        return
    ids_bytes = task_id.encode(), context_id.encode()
    json = task.to_json()
    assert cut == _memory_pack._short(json, task, *ids_bytes)
    assert _memory_pack._lengthen(cut, *ids_bytes) == json


def test_a_message_made_without_its_parts_is_left_to_the_search() -> None:
    """A model made without validation may hold no part: ``_short`` declines it."""
    asked = Message.model_construct(message_id="m1", role=Role.user, parts=[])
    task = _start("t", "c", [asked])
    assert _memory_pack._short(task.to_json(), task, b"t", b"c") is None
