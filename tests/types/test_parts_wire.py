"""A part is written the same inside a message or an artifact as on its own (spec 6.5):
``Part`` serialises each part with its own model, not through the union."""

from __future__ import annotations

import json

import pytest

from parley.types import (
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Message,
    Part,
    Role,
    TaskArtifactUpdateEvent,
    TextPart,
)

PARTS: list[Part] = [
    TextPart(text="chunk 0;"),
    TextPart(text="with metadata", metadata={"lang": "en", "none": None}),
    FilePart(file=FileWithBytes(bytes="aGk=", mime_type="text/plain", name="hi.txt")),
    FilePart(file=FileWithUri(uri="https://example.com/a.pdf"), metadata={"pages": 3}),
    DataPart(data={"rows": [1, None, {"x": None}], "empty": {}}),
]


@pytest.mark.parametrize("part", PARTS, ids=lambda part: part.kind)
def test_a_part_is_written_inside_a_message_or_artifact_as_on_its_own(part: Part) -> None:
    alone = json.loads(part.to_json())
    message = Message(message_id="m", role=Role.agent, parts=[part, TextPart(text="x")])
    artifact = Artifact(artifact_id="a", parts=[part])
    event = TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=artifact, append=True)
    assert json.loads(message.to_json())["parts"] == [alone, {"kind": "text", "text": "x"}]
    assert json.loads(event.to_json())["artifact"]["parts"] == [alone]
    assert message.to_wire()["parts"][0] == part.to_wire() == alone
    assert "kind" in alone
