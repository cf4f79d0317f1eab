"""A text chunk's event made without validating (``built_text_chunk``) and its wire JSON
made from its text's JSON (``encode_chunk``): the validated event and the serialiser's
bytes, byte for byte (the store and every stream send it)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley._speedups._chunks import built_text_chunk, encode_chunk
from parley.types import (
    A2AModel,
    Artifact,
    TaskArtifactUpdateEvent,
    TextPart,
)
from parley.types._events import text_chunk as validated_chunk

FLAGS = (None, True, False)


def text_chunk(
    task_id: str,
    context_id: str,
    artifact_id: str,
    text: str,
    name: str | None = None,
    append: bool | None = None,
    last_chunk: bool | None = None,
) -> TaskArtifactUpdateEvent:
    """The event as the server's ``TaskUpdater`` makes it: built, or else validated."""
    fields = (task_id, context_id, artifact_id, text, name, append, last_chunk)
    return built_text_chunk(*fields) or validated_chunk(*fields)


def _json(event: TaskArtifactUpdateEvent) -> bytes:
    """The event's JSON as the store and the streams write it: written, or serialised."""
    return encode_chunk(event) or A2AModel.to_json(event)


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
    assert _as_made(event) == _as_made(_validated(*ids, text, name, append, last_chunk))
    assert encode_chunk(event) == _serialised(expected)  # (no lone surrogates: see below)


def _validated(
    task_id: str,
    context_id: str,
    artifact_id: str,
    text: str,
    name: str | None = None,
    append: object = None,
    last_chunk: object = None,
) -> TaskArtifactUpdateEvent:
    """The event validated from the fields given (those not ``None``)."""
    artifact: dict[str, Any] = {
        "artifact_id": artifact_id,
        "parts": [{"kind": "text", "text": text}],
    }
    fields: dict[str, Any] = {"task_id": task_id, "context_id": context_id, "artifact": artifact}
    given = {"name": name, "append": append, "last_chunk": last_chunk}
    for field, value in given.items():
        if value is not None:
            (artifact if field == "name" else fields)[field] = value
    return TaskArtifactUpdateEvent.model_validate(fields)


def _as_made(model: object) -> object:
    """Everything a model holds, nested models included: its fields in their order, the
    fields set, and its extra and private attributes (what validation leaves)."""
    if isinstance(model, list):
        return [_as_made(item) for item in model]
    if not isinstance(model, A2AModel):
        return model
    return (
        type(model),
        [(name, _as_made(value)) for name, value in model.__dict__.items()],
        model.__pydantic_fields_set__,
        model.__pydantic_extra__,
        model.__pydantic_private__,
    )


def test_values_validation_would_change_or_refuse_are_validated() -> None:
    """Only values of the fields' own types skip validation: others are converted or
    refused as validating the event's fields would."""

    class Name(str):
        pass

    assert built_text_chunk("t", "c", "a", "text", Name("answer")) is None
    event = text_chunk("t", "c", "a", "text", Name("answer"), append=1)  # type: ignore[arg-type]
    expected = _validated("t", "c", "a", "text", Name("answer"), append=1)
    assert _as_made(event) == _as_made(expected)
    assert event.append is True
    assert type(event.artifact.name) is type(expected.artifact.name)
    with pytest.raises(ValueError, match="artifact_id"):
        text_chunk("t", "c", 5, "text")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    ['say "hi"', "back\\slash", "tab\tnew\nline\x00\x1f\x7f", "ünïcödé ✓ 🎉", "\u2028\u2029", ""],
)
def test_texts_that_json_escapes(text: str) -> None:
    event = text_chunk("t", "c", "a", text, append=True)
    assert _json(event) == _serialised(event)


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
        assert _json(event) == _serialised(event)


def test_a_copy_or_a_change_of_a_made_chunk_is_serialised_anew() -> None:
    """The JSON goes with the event as made: a copy with a change has its own."""
    event = text_chunk("t", "c", "a", "one", append=True)
    for changed in (event.copied(append=False), event.model_copy(update={"append": False})):
        assert b'"append":false' in _json(changed)
        assert _json(changed) == _serialised(changed)


def test_a_lone_surrogate_is_refused_when_serialised_not_when_made() -> None:
    """As an event validated from the same fields: no JSON can hold it."""
    event = text_chunk("t", "c", "a", "\ud800")
    with pytest.raises(ValueError, match="surrogates not allowed"):
        _json(event)
