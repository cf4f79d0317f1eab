"""Which dialect a JSON-RPC request speaks: every dialect parley serves, and the rule.

1. An ``A2A-Version`` (header or request parameter) picks the dialect that declares that
   ``Major.Minor``; a version no dialect declares is refused with
   ``VersionNotSupportedError``. Absent, the request is told apart by its method:
2. a method name only one dialect has belongs to it (``tasks/send`` is 2025-early's,
   ``message/send`` v0.3's);
3. a name several dialects share (``tasks/get``, ``tasks/cancel``) belongs to the first
   other dialect whose ``claims`` accepts the params (2025-early claims those that carry
   ``sessionId``), and otherwise to the default, v0.3 (a request with no version is a
   v0.3 request, v1.0.1 3.6.2);
4. an unknown name is answered by the default dialect ("Method not found").

Adding a dialect is adding it to ``DIALECTS``.
"""

from __future__ import annotations

from typing import Any

from parley.protocol._dialect import V0_3, Dialect
from parley.protocol._errors import VersionNotSupportedError
from parley.protocol.early import EARLY


def _v1() -> tuple[Dialect, ...]:
    """v1.0's JSON-RPC methods: its ProtoJSON is read through the ``lf.a2a.v1``
    messages."""
    from parley.protocol.v1 import DIALECT

    return (DIALECT,)


DEFAULT_DIALECT = V0_3
DIALECTS: tuple[Dialect, ...] = (V0_3, EARLY, *_v1())
"""Every dialect of the JSON-RPC binding; the first is the default."""

DIALECTS_BY_NAME: dict[str, Dialect] = {dialect.name: dialect for dialect in DIALECTS}
_BY_VERSION: dict[str, Dialect] = {
    version: dialect for dialect in DIALECTS for version in dialect.versions
}
_OWNERS: dict[str, tuple[Dialect, ...]] = {}
for _dialect in DIALECTS:
    for _method in _dialect.methods:
        _OWNERS[_method] = (*_OWNERS.get(_method, ()), _dialect)

SHARED_METHODS: frozenset[str] = frozenset(
    method for method, owners in _OWNERS.items() if len(owners) > 1
)
"""Method names more than one dialect has: the only ones whose params are looked at."""
CLAIM_HINTS: tuple[bytes, ...] = tuple(
    dialect.hint for dialect in DIALECTS if dialect.claims is not None
)
"""What a request on a shared name must contain for another dialect to claim it."""


def dialect_for_version(version: str) -> Dialect:
    """The dialect an ``A2A-Version`` value selects (patch numbers are ignored, v1.0.1
    3.6). Raises ``VersionNotSupportedError`` naming the versions served."""
    wanted = ".".join(version.strip().split(".")[:2])
    dialect = _BY_VERSION.get(wanted)
    if dialect is None:
        served = ", ".join(sorted(_BY_VERSION))
        raise VersionNotSupportedError(
            f"A2A version {version!r} is not supported; this agent speaks {served}"
        )
    return dialect


def recognise(method: str, params: Any, version: str | None = None) -> Dialect:
    """The dialect of a request with ``method`` and ``params`` (parsed JSON), following
    the rule in the module docs. Raises ``VersionNotSupportedError``."""
    if version:
        return dialect_for_version(version)
    owners = _OWNERS.get(method)
    if owners is None:
        return DEFAULT_DIALECT
    if len(owners) == 1:
        return owners[0]
    for dialect in owners:
        if dialect is not DEFAULT_DIALECT and dialect.claims is not None and dialect.claims(params):
            return dialect
    return DEFAULT_DIALECT if DEFAULT_DIALECT in owners else owners[0]
