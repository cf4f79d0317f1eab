"""A new task's message copied with its ids by the speed seam (``with_ids``) is what
``Message.copied`` gives: the same fields, the same fields set, the same wire JSON; the
original is left as it was."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parley._speedups import enabled, with_ids
from parley.types import Message
from tests.bindings.strategies import messages
from tests.speedups import plain

pytestmark = pytest.mark.skipif(not enabled(), reason="PARLEY_SPEEDUPS=0: the plain path")


@settings(max_examples=150, deadline=None)
@given(message=messages, task_id=st.text(min_size=1), context_id=st.text(min_size=1))
def test_a_message_with_ids_is_its_copy(message: Message, task_id: str, context_id: str) -> None:
    before = message.to_json()
    fast = with_ids(message, task_id, context_id)
    copied = message.copied(task_id=task_id, context_id=context_id)
    assert fast is not None
    assert fast == copied
    assert fast.__pydantic_fields_set__ == copied.__pydantic_fields_set__
    assert fast.to_json() == copied.to_json()
    assert (fast.task_id, fast.context_id) == (task_id, context_id)
    assert message.to_json() == before
    with plain():
        assert with_ids(message, task_id, context_id) is None
