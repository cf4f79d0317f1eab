"""Attribute reads on parley's models skip pydantic's ``__getattr__``
(``parley._speedups._getattr``) where it has nothing to do, and keep it where it has."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ConfigDict, PrivateAttr

from parley._speedups import enabled
from parley.types import (
    Artifact,
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.types._base import A2AModel

pytestmark = pytest.mark.skipif(not enabled(), reason="PARLEY_SPEEDUPS=0: the plain path")


def _missing(model: Any) -> AttributeError:
    with pytest.raises(AttributeError) as raised:
        model.no_such_field  # noqa: B018
    return raised.value


def _models() -> list[A2AModel]:
    status = TaskStatus(state=TaskState.working)
    message = Message(message_id="m", role=Role.user, parts=[TextPart(text="hi")])
    artifact = Artifact(artifact_id="a", parts=[TextPart(text="hi")])
    task = Task(id="t", context_id="c", status=status, history=[message], artifacts=[artifact])
    update = TaskStatusUpdateEvent(task_id="t", context_id="c", status=status, final=False)
    return [status, message, artifact, task, update, message.parts[0]]


@pytest.mark.parametrize("model", _models(), ids=lambda model: type(model).__name__)
def test_a_missing_attribute_is_refused_by_objects_own_lookup(model: A2AModel) -> None:
    error = _missing(model)
    assert str(error) == f"'{type(model).__name__}' object has no attribute 'no_such_field'"
    # raised by the lookup itself: no frame of pydantic's ``__getattr__`` under the read
    assert error.__traceback__ is not None
    assert error.__traceback__.tb_next is None


def test_a_subclass_of_a_model_reads_as_plainly() -> None:
    class Flagged(TaskStatus):
        flag: bool = False

    flagged = Flagged(state=TaskState.working, flag=True)
    assert flagged.flag is True
    assert flagged.state is TaskState.working
    assert _missing(flagged).__traceback__.tb_next is None  # type: ignore[union-attr]


def test_a_model_with_private_attributes_keeps_pydantics_lookup() -> None:
    class Tracked(A2AModel):
        name: str
        _seen: int = PrivateAttr(default=3)

    tracked = Tracked(name="n")
    assert tracked._seen == 3
    tracked._seen = 4
    assert tracked._seen == 4
    assert tracked.name == "n"


def test_a_model_that_keeps_extra_fields_keeps_pydantics_lookup() -> None:
    class Open(A2AModel):
        model_config = ConfigDict(extra="allow")
        name: str

    opened = Open.model_validate({"name": "n", "other": 1})
    assert opened.name == "n"
    assert opened.other == 1  # type: ignore[attr-defined]
    assert "'Open' object has no attribute 'no_such_field'" in str(_missing(opened))
