"""The reducer shared by server and client (spec 7.2.2, 7.2.3)."""

from __future__ import annotations

from parley.protocol import apply
from parley.types import (
    Artifact,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)


def task() -> Task:
    return Task(id="t", context_id="c", status=TaskStatus(state=TaskState.submitted))


def chunk(
    text: str, *, append: bool | None = None, artifact_id: str = "a"
) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="t",
        context_id="c",
        append=append,
        artifact=Artifact(artifact_id=artifact_id, parts=[TextPart(text=text)]),
    )


def texts(t: Task, index: int = 0) -> list[str]:
    assert t.artifacts is not None
    return [p.text for p in t.artifacts[index].parts]  # type: ignore[union-attr]


def test_append_grows_one_artifact_without_touching_the_events() -> None:
    first, second = chunk("a"), chunk("b", append=True)
    result = apply(apply(task(), first), second)
    assert result is not None
    assert texts(result) == ["a", "b"]
    assert [p.text for p in first.artifact.parts] == ["a"]  # type: ignore[union-attr]


def test_same_id_without_append_replaces_and_new_id_adds() -> None:
    result = apply(apply(apply(task(), chunk("a")), chunk("b")), chunk("c", artifact_id="z"))
    assert result is not None
    assert texts(result) == ["b"]
    assert texts(result, 1) == ["c"]


def test_status_message_moves_to_history_when_replaced() -> None:
    question = Message(message_id="q", role=Role.agent, parts=[TextPart(text="?")])
    asking = TaskStatusUpdateEvent(
        task_id="t",
        context_id="c",
        final=True,
        status=TaskStatus(state=TaskState.input_required, message=question),
    )
    working = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.working)
    )
    result = apply(apply(task(), asking), working)
    assert result is not None
    assert result.status.state is TaskState.working
    assert result.history == [question]


def test_message_without_task_creates_nothing() -> None:
    reply = Message(message_id="r", role=Role.agent, parts=[TextPart(text="hi")])
    assert apply(None, reply) is None
    assert apply(None, chunk("a")) is None


def test_what_the_reducer_sets_counts_as_set() -> None:
    """The fields ``apply`` fills in are among the task's fields set, as if assigned
    (``exclude_unset`` dumps keep them), and the status it replaces is replaced."""
    status = TaskStatus(state=TaskState.working, message=None)
    update = TaskStatusUpdateEvent(task_id="t", context_id="c", status=status)
    noted = chunk("a")
    noted.artifact.metadata = {"k": 1}
    more = chunk("b", append=True)
    more.artifact.metadata = {"j": 2}
    message = Message(message_id="m", role=Role.user, parts=[TextPart(text="hi")])
    result = apply(apply(apply(apply(task(), update), noted), more), message)
    assert result is not None
    assert result.status is status
    assert {"status", "artifacts", "history"} <= result.model_fields_set
    assert result.artifacts is not None
    assert result.artifacts[0].metadata == {"k": 1, "j": 2}
    assert "metadata" in result.artifacts[0].model_fields_set
    dumped = result.model_dump(exclude_unset=True)
    assert [m["messageId"] for m in dumped["history"]] == ["m"]
    assert dumped["artifacts"][0]["metadata"] == {"k": 1, "j": 2}


def test_an_artifact_is_kept_as_the_event_brought_it_and_copied_once_to_grow() -> None:
    """The task holds an event's artifact itself (no copy per event); the first chunk
    appended to it makes the task's own copy, which the later ones grow in place, and
    no event's artifact changes: neither an artifact update's nor a ``Task`` event's."""
    first = chunk("a")
    result = apply(task(), first)
    assert result is not None
    assert result.artifacts is not None
    assert result.artifacts[0] is first.artifact
    apply(result, chunk("b", append=True))
    grown = result.artifacts[0]
    assert grown is not first.artifact
    apply(result, chunk("c", append=True))
    assert result.artifacts[0] is grown
    assert texts(result) == ["a", "b", "c"]
    assert [p.text for p in first.artifact.parts] == ["a"]  # type: ignore[union-attr]

    snapshot = Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.working),
        artifacts=[Artifact(artifact_id="a", parts=[TextPart(text="x")])],
    )
    folded = apply(None, snapshot)
    assert folded is not None
    assert folded.artifacts is not None
    assert snapshot.artifacts is not None
    assert folded.artifacts[0] is snapshot.artifacts[0]
    apply(folded, chunk("y", append=True))
    assert texts(folded) == ["x", "y"]
    assert [p.text for p in snapshot.artifacts[0].parts] == ["x"]  # type: ignore[union-attr]


def test_an_artifact_a_task_grew_and_an_agent_emits_again_is_not_grown_in_the_event() -> None:
    """An agent emitting its ``context.task`` (a shallow copy of the live task) hands
    the reducer the artifact the task grows in place: the task a ``Task`` event makes
    copies it, so a later chunk leaves the emitted event as it was."""
    result = apply(task(), chunk("a"))
    assert result is not None
    apply(result, chunk("b", append=True))  # the task's own copy now, grown in place
    again = result.copied()
    folded = apply(result, again)
    assert folded is not None
    apply(folded, chunk("c", append=True))
    assert texts(folded) == ["a", "b", "c"]
    assert again.artifacts is not None
    assert [p.text for p in again.artifacts[0].parts] == ["a", "b"]  # type: ignore[union-attr]
