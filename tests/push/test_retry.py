"""The retry schedule of push delivery (docs/push.md "Delivery and retries")."""

from __future__ import annotations

import email.utils
import time

import pytest

from parley.server.push import PushRetry
from parley.server.push._delivery import retry_after


@pytest.mark.parametrize("attempts", range(1, 15))
def test_the_delay_doubles_with_jitter_up_to_its_cap(attempts: int) -> None:
    retry = PushRetry(first=1.0, factor=2.0, longest=600.0)
    ceiling = min(600.0, 2.0 ** (attempts - 1))
    delays = [retry.delay(attempts) for _ in range(200)]
    assert all(ceiling / 2 <= delay <= ceiling for delay in delays)
    assert len(set(delays)) > 1  # jittered: retries of many webhooks do not line up


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert retry_after("7") == 7.0
    assert retry_after(None) is None
    assert retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 120, usegmt=True)
    seconds = retry_after(later)
    assert seconds is not None
    assert 100 < seconds <= 120
    assert retry_after(email.utils.formatdate(time.time() - 60, usegmt=True)) == 0.0
