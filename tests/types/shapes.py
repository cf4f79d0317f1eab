"""The commonest finished task (an echo's answer), which the written fast paths of
``parley._speedups`` (v0.3's ``written_pieces``, v1.0's ``written_task``) write out from
its values, the texts JSON escapes that they must quote as the serialisers do, and tasks
of that shape but for one nested field, which they must leave to the serialisers."""

from __future__ import annotations

from collections.abc import Callable

from parley.types import Artifact, Message, Role, Task, TaskState, TaskStatus, TextPart

TEXTS = [
    'say "hi"',
    "back\\slash",
    "tab\tnew\nline\x00\x1f\x7f",
    "ünïcödé ✓ 🎉",
    "\u2028\u2029",
    "",
]
STAMP = "2026-11-24T16:00:00.000000+00:00"
"""A time in the core's form (``server.agent._ids.now``)."""


def finished(
    text: str = "hello",
    answer: str | None = None,
    ids: tuple[str, str, str, str] = ("t", "c", "m", "a"),
    state: TaskState = TaskState.completed,
    role: Role = Role.user,
    stamp: str | None = STAMP,
) -> Task:
    """A task as an echo send leaves it: the message's ids the task's own objects, the
    artifact's text the message's (``answer``: another)."""
    task_id, context_id, message_id, artifact_id = ids
    message = Message(
        message_id=message_id,
        role=role,
        parts=[TextPart(text=text)],
        context_id=context_id,
        task_id=task_id,
    )
    artifact = Artifact(
        artifact_id=artifact_id,
        parts=[TextPart(text=text if answer is None else answer)],
        name="response",
    )
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=stamp),
        history=[message],
        artifacts=[artifact],
    )


def with_nested_metadata(finished: Callable[[], Task]) -> list[Task]:
    """Three tasks made by ``finished()``: metadata on its history's message, on its
    artifact, or on that artifact's first part (a text part)."""
    tasks = []
    for nested in ("message", "artifact", "part"):
        task = finished()
        assert task.history is not None
        assert task.artifacts is not None
        part = task.artifacts[0].parts[0]
        assert isinstance(part, TextPart)
        held: dict[str, Message | Artifact | TextPart] = {
            "message": task.history[0],
            "artifact": task.artifacts[0],
            "part": part,
        }
        held[nested].metadata = {"k": True}
        tasks.append(task)
    return tasks
