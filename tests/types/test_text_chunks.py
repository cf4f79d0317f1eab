"""``text_chunk``: a text chunk's event, whose wire JSON is made from its text's JSON and
must be the serialiser's, byte for byte (the store and every stream send it)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.types import (
    A2AModel,
    Artifact,
    TaskArtifactUpdateEvent,
    TextPart,
)
from parley.types._events import text_chunk

FLAGS = (None, True, False)


def _serialised(event: TaskArtifactUpdateEvent) -> bytes:
    return A2AModel.to_json(event)


@given(
    text=st.text(),
    ids=st.tuples(st.text(min_size=1), st.text(min_size=1), st.text(min_size=1)),
    name=st.none() | st.text(),
    append=st.sampled_from(FLAGS),
    last_chunk=st.sampled_from(FLAGS),
)
def test_a_chunks_json_is_the_serialisers(
    text: str,
    ids: tuple[str, str, str],
    name: str | None,
    append: bool | None,
    last_chunk: bool | None,
) -> None:
    task_id, context_id, artifact_id = ids
    event = text_chunk(task_id, context_id, artifact_id, text, name, append, last_chunk)
    expected = TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id=context_id,
        artifact=Artifact(artifact_id=artifact_id, parts=[TextPart(text=text)], name=name),
        append=append,
        last_chunk=last_chunk,
    )
    assert event == expected
    assert event.to_json() == _serialised(expected)  # (no lone surrogates: see below)


@pytest.mark.parametrize(
    "text",
    ['say "hi"', "back\\slash", "tab\tnew\nline\x00\x1f\x7f", "ünïcödé ✓ 🎉", "\u2028\u2029", ""],
)
def test_texts_that_json_escapes(text: str) -> None:
    event = text_chunk("t", "c", "a", text, append=True)
    assert event.to_json() == _serialised(event)


def test_chunks_of_one_artifact_then_another() -> None:
    """The part of the JSON encoded once per artifact follows the ids."""
    made = [
        text_chunk("t", "c", "a", "one", "answer"),
        text_chunk("t", "c", "a", "two", append=True),
        text_chunk("t", "c", "b", "three", "notes"),
        text_chunk("t", "c", "a", "four", append=True, last_chunk=True),
        text_chunk("t2", "c", "a", "five", append=True),
        text_chunk("t2", "c2", "a", "six", append=True),
    ]
    for event in made:
        assert event.to_json() == _serialised(event)


def test_a_copy_or_a_change_of_a_made_chunk_is_serialised_anew() -> None:
    """The JSON goes with the event as made: a copy with a change has its own."""
    event = text_chunk("t", "c", "a", "one", append=True)
    for changed in (event.copied(append=False), event.model_copy(update={"append": False})):
        assert b'"append":false' in changed.to_json()
        assert changed.to_json() == _serialised(changed)


def test_a_lone_surrogate_is_refused_when_serialised_not_when_made() -> None:
    """As an event validated from the same fields: no JSON can hold it."""
    event = text_chunk("t", "c", "a", "\ud800")
    with pytest.raises(ValueError, match="surrogates not allowed"):
        event.to_json()
