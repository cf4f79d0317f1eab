"""Which REST dialect an HTTP+JSON request speaks: every dialect parley serves, and the rule.

1. An ``A2A-Version`` (header or query parameter) picks the dialect of that version; a
   version no dialect speaks is refused with ``VersionNotSupportedError``, answered in
   the newest dialect's error body.
2. Without one, the path decides: a path under a dialect's ``prefix`` (v0.3's ``/v1/``)
   is that dialect's, any other the dialect without a prefix (v1.0's).

Adding a version is adding its dialect to ``REST_DIALECTS``.
"""

from __future__ import annotations

from parley.protocol._rest import RESTDialect
from parley.protocol._versions import requested_version
from parley.protocol.protobuf._rest import REST_V0_3
from parley.protocol.v1._rest import REST_V1_0

REST_DIALECTS: tuple[RESTDialect, ...] = (REST_V1_0, REST_V0_3)
"""Every dialect of the HTTP+JSON binding, newest first."""
NEWEST_REST = REST_DIALECTS[0]
"""The dialect that answers a request for a version parley does not speak."""

_BY_VERSION = {dialect.version: dialect for dialect in REST_DIALECTS}
_UNPREFIXED = next(dialect for dialect in REST_DIALECTS if not dialect.prefix)


def rest_dialect(version: str | None, path: str) -> RESTDialect:
    """The dialect of a request asking for ``version`` (``A2A-Version`` as sent, or
    ``None``) at ``path`` (below the binding's prefix), by the rule in the module docs.
    Raises ``VersionNotSupportedError``."""
    wanted = requested_version(version)
    if wanted is not None:
        return _BY_VERSION[wanted]
    return path_dialect(path)


def path_dialect(path: str) -> RESTDialect:
    """The dialect a path belongs to when the request names no version."""
    for dialect in REST_DIALECTS:
        if dialect.prefix and path.startswith(dialect.prefix):
            return dialect
    return _UNPREFIXED
