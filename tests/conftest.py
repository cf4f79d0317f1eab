"""Shared fixtures.

Every A2A app a test serves, in memory or on uvicorn, from a test or from a fixture of
any scope, is observed by the schema conformance check (``tests/conformance.py``): a
test during which a server emitted anything that is not valid against ``a2a.json``
fails, whatever the test itself asserted.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from parley.server import A2AApp
from tests.conformance import Observations, observe

# The test process keeps a collector close to CPython's own. The servers tests start in
# it would otherwise tune it for serving (``tune_gc``: a frozen heap and a young threshold
# of 40,000 that grows with what is alive), and garbage one test's event loop left
# behind (a pooled connection a canceled request abandoned) would then be finalized
# many tests later, after that loop has closed, failing a test that has nothing to do
# with it. ``tune_gc`` leaves a process that set its own thresholds alone; the tuning
# itself is tested in processes of its own (tests/server/test_gc_tuning.py).
gc.set_threshold(700, 10, 11)


@pytest.fixture(scope="session", autouse=True)
def schema_observer() -> Iterator[Observations]:
    """Observe every A2AApp call of the whole session (see ``tests/conformance.py``)."""
    seen = Observations()
    original = A2AApp.__call__

    async def observed(self: A2AApp, scope: dict[str, Any], receive: Any, send: Any) -> None:
        def app(s: dict[str, Any], r: Any, w: Any) -> Any:
            return original(self, s, r, w)

        await observe(app, scope, receive, send, seen, self.rpc_path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(A2AApp, "__call__", observed)
        yield seen


@pytest.fixture(autouse=True)
def schema_conformance(schema_observer: Observations) -> Iterator[Observations]:
    """Fail the test if a server emitted a payload a2a.json refuses while it ran."""
    # Violations seen since the last test ended (say, while a module-scoped fixture
    # served its app for this test) count against this test too.
    yield schema_observer
    violations = schema_observer.unreported()
    if violations:
        pytest.fail("the server emitted payloads that a2a.json refuses:\n" + "\n".join(violations))
