"""Shared fixtures.

Every A2A app a test serves, in memory or on uvicorn, is observed by the schema
conformance check (``tests/conformance.py``): a test whose server emitted anything that
is not valid against ``a2a.json`` fails, whatever the test itself asserted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from parley.server import A2AApp
from tests.conformance import Observations, observe


@pytest.fixture(autouse=True)
def schema_conformance(monkeypatch: pytest.MonkeyPatch) -> Iterator[Observations]:
    """Check everything any A2AApp emits during the test against a2a.json."""
    seen = Observations()
    original = A2AApp.__call__

    async def observed(self: A2AApp, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await observe(lambda s, r, w: original(self, s, r, w), scope, receive, send, seen)

    monkeypatch.setattr(A2AApp, "__call__", observed)
    yield seen
    if seen.violations:
        pytest.fail(
            "the server emitted payloads that a2a.json refuses:\n" + "\n".join(seen.violations)
        )
