"""The fast ids and timestamps (``parley._speedups._ids``) against the plain ones beside
their caller (``parley.server.agent._ids``): the same text for every moment, ids of the
same form."""

from __future__ import annotations

import random
import re
import time
import uuid

import pytest

from parley._speedups import enabled, new_id, new_ordered_id, timestamp
from parley.server.agent import _ids
from tests.speedups import plain

pytestmark = pytest.mark.skipif(not enabled(), reason="PARLEY_SPEEDUPS=0: the plain path")

_V4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_V7 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def test_a_timestamp_is_the_same_text_either_way() -> None:
    chance = random.Random(38)
    start = time.time_ns() // 1000
    moments = [start, start - start % 1_000_000, 0, 7, 1_000_000_000_000_000 - 1]
    moments += [chance.randrange(0, 4_102_444_800_000_000) for _ in range(2000)]
    moments += [start + chance.randrange(-(10**9), 10**9) for _ in range(2000)]
    for moment in moments:
        fast = timestamp(moment)
        with plain():
            assert timestamp(moment) is None
            plainly = _ids.timestamp(moment)
        assert fast == plainly, moment


def test_ids_have_the_same_form_either_way() -> None:
    fast = [new_id() for _ in range(600)], [new_ordered_id() for _ in range(600)]
    with plain():
        assert new_id() is None
        assert new_ordered_id() is None
        plainly = [_ids.new_id() for _ in range(600)], [_ids.new_ordered_id() for _ in range(600)]
    for v4, v7 in (fast, plainly):
        assert all(text is not None and _V4.fullmatch(text) for text in v4)
        assert all(text is not None and _V7.fullmatch(text) for text in v7)
        assert len(set(v4)) == len(v4)
        assert len(set(v7)) == len(v7)
        milliseconds = [uuid.UUID(text).int >> 80 for text in v7 if text is not None]
        assert milliseconds == sorted(milliseconds)
        assert abs(milliseconds[-1] - time.time() * 1000) < 60_000
