"""The reducer: ``apply(task, event) -> task``, the one way an event changes a task.

The server folds every event an agent emits into the live task with it; the client's
task tracker rebuilds a task from a stream with it. It mutates ``task`` in place (the
server's hot path must not copy a growing task per event) and never mutates ``event``:
whatever it keeps from an event it copies first, because the same event object also sits
in the event log where other readers see it.

Rules (spec 7.2.2, 7.2.3, and A2A's "Life of a Task"):
- a ``Task`` replaces what was known;
- a ``Message`` for the task joins its history;
- a status update sets the status; the message of the status it replaces joins the
  history, so history holds every message but the one in the current status;
- an artifact update adds the artifact, replaces the one with the same id, or with
  ``append`` adds its parts to that one.
"""

from __future__ import annotations

from typing import Any

from parley.types import (
    A2AModel,
    Artifact,
    Event,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)


def apply(task: Task | None, event: Event) -> Task | None:
    """Fold ``event`` into ``task`` and return the task (``None`` while there is none).

    A ``Message`` with no task leaves it ``None``: a direct reply creates no task.
    """
    # The commonest kinds by exact type first: a model class's isinstance that fails
    # is ABCMeta's, several times slower.
    if type(event) is TaskArtifactUpdateEvent:
        if task is not None:
            _apply_artifact(task, event)
        return task
    if type(event) is Task:
        return copy_task(event)
    if isinstance(event, TaskStatusUpdateEvent):
        if task is not None:
            previous = task.status.message
            if previous is not None and previous is not event.status.message:
                add_to_history(task, previous)
            task.__dict__["status"] = event.status  # a required field: always among those set
        return task
    if isinstance(event, TaskArtifactUpdateEvent):
        if task is not None:
            _apply_artifact(task, event)
        return task
    if isinstance(event, Task):
        return copy_task(event)
    if isinstance(event, Message) and task is not None:
        add_to_history(task, event)
    return task


def copy_task(task: Task) -> Task:
    """A copy of ``task`` that later events applied to either one do not change in the
    other: its own history and artifact lists, and its own copy of every artifact a task
    grows in place. A ``Task`` event makes the task this way (an agent emitting its
    ``context.task`` hands over a task whose artifacts the live task grew); the server
    gives an agent the task as it was before its message this way."""
    artifacts = task.artifacts
    if artifacts:
        artifacts = [_shared(artifact) if _owned(artifact) else artifact for artifact in artifacts]
    return task.copied(
        history=list(task.history) if task.history else task.history,
        artifacts=artifacts,
    )


def add_to_history(task: Task, message: Message) -> None:
    """Append ``message`` to the task's history (creating the list if needed)."""
    if task.history is None:
        _put(task, "history", [message])
    else:
        task.history.append(message)


def _apply_artifact(task: Task, event: TaskArtifactUpdateEvent) -> None:
    new = event.artifact
    artifacts = task.artifacts
    if artifacts is None:
        _put(task, "artifacts", [new])
        return
    for index, existing in enumerate(artifacts):
        if existing.artifact_id == new.artifact_id:
            if event.append:
                existing = _own(existing)
                artifacts[index] = existing
                existing.parts.extend(new.parts)
                if new.metadata:
                    _put(existing, "metadata", {**(existing.metadata or {}), **new.metadata})
            else:
                artifacts[index] = new
            return
    artifacts.append(new)


def _put(model: A2AModel, name: str, value: Any) -> None:
    """``model.name = value`` as pydantic's own handler for a field does it, without
    its ``__setattr__`` finding that handler first (a lookup per assignment; the models
    validate no assignment). The reducer sets fields two or three times per send."""
    model.__dict__[name] = value
    model.__pydantic_fields_set__.add(name)


def _own(artifact: Artifact) -> Artifact:
    """``artifact`` if the reducer made it, else a copy it makes (its own parts list), to
    change in place: an artifact the task holds as an event brought it is that event's,
    and an append must not reach back into the event log. One copy per artifact, not
    per chunk: a long stream's appends stay linear."""
    if _owned(artifact):
        return artifact
    copy = _shared(artifact)
    _set_owned(copy, True)
    return copy


def _owned(artifact: Artifact) -> bool:
    """Whether ``_own`` made ``artifact`` (a task's own, which it grows in place)."""
    try:
        _get_owned(artifact)
    except AttributeError:  # validated or copied elsewhere: not the reducer's own
        return False
    return True


def _shared(artifact: Artifact) -> Artifact:
    """A copy of ``artifact`` with its own parts list, not marked as a task's own."""
    return artifact.copied(parts=list(artifact.parts))


_get_owned = Artifact.__dict__["_owned"].__get__
_set_owned = Artifact.__dict__["_owned"].__set__
"""Set on the copies ``_own`` makes (the slot's descriptor itself: pydantic's
``__setattr__`` refuses a name it does not know)."""
