"""Tasks of the commonest finished shape but for one nested field, which the written
fast paths (v0.3's ``written_pieces``, v1.0's ``written_task``) must leave to their
serialisers. Each test module builds its own commonest task (``finished``)."""

from __future__ import annotations

from collections.abc import Callable

from parley.types import Artifact, Message, Task, TextPart


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
