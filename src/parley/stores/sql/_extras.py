"""The one place that checks the SQL extras are installed, and says how to get them."""

from __future__ import annotations

from parley._extras import MissingExtraError, absent, install_line


def require(*modules: str, extra: str) -> None:
    """Raise ``MissingExtraError`` naming ``extra`` if any of ``modules`` is missing;
    ``extra`` is ``sqlite``, ``postgresql``, or ``sql`` for what both bring."""
    gone = absent(*modules)
    if not gone:
        return
    if extra == "sql":
        how = f"{install_line('sqlite')} (or [postgresql])"
        extra = "sqlite or postgresql"
    else:
        how = install_line(extra)
    raise MissingExtraError(f"SQL stores need the {extra} extra ({', '.join(gone)} missing): {how}")
