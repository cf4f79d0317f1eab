"""``text_of``: the readable text of an answer, for programs that just want the words."""

from __future__ import annotations

from parley.types import Artifact, Message, Part, Task, TextPart


def text_of(answer: Task | Message | Artifact | None) -> str:
    """The text parts of a reply, of a task's artifacts (or, with none, of its status
    message), or of an artifact, joined; ``""`` when there is none."""
    if answer is None:
        return ""
    if isinstance(answer, Message | Artifact):
        return _join(answer.parts)
    if answer.artifacts:
        return "\n".join(text for a in answer.artifacts if (text := _join(a.parts)))
    return text_of(answer.status.message)


def _join(parts: list[Part]) -> str:
    return "".join(part.text for part in parts if isinstance(part, TextPart))
