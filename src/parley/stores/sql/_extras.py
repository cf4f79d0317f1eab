"""The one place that checks the SQL extras are installed, and says how to get them."""

from __future__ import annotations

from importlib.util import find_spec


def require(*modules: str, extra: str) -> None:
    """Raise ``ImportError`` naming ``parley[extra]`` if any of ``modules`` is missing."""
    missing = [name for name in modules if find_spec(name) is None]
    if missing:
        raise ImportError(
            f"this needs the {extra} extra ({', '.join(missing)} missing): "
            f"pip install 'parley[{extra}]'"
        )
