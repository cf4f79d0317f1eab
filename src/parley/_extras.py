"""Optional dependencies: which extra brings which module, and the one error that says
what to install when a feature needs one that is missing.

parley's core (types, protocol, the client over HTTP) needs no extra. Everything else is
loaded where it is used, and checked here first, so that importing unrelated code never
fails and a missing extra fails with one line naming it."""

from __future__ import annotations

from importlib.util import find_spec

DISTRIBUTION = "parley-a2a"
"""The name parley is installed by (the import name and the command are ``parley``)."""

EXTRAS: dict[str, tuple[str, ...]] = {
    "server": ("starlette", "uvicorn"),
    "grpc": ("grpc",),
    "sqlite": ("sqlalchemy", "aiosqlite", "alembic"),
    "postgresql": ("sqlalchemy", "asyncpg", "alembic"),
    "redis": ("redis",),
    "cli": ("typer", "rich"),
    "telemetry": ("opentelemetry",),
}
"""Each extra, and the top-level modules whose absence means it is not installed."""


class MissingExtraError(ImportError):
    """A feature was used whose extra is not installed; the message names the extra."""


def install_line(extra: str) -> str:
    """The command that installs ``extra``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported."""
    return absent(*EXTRAS[extra])


def absent(*modules: str) -> list[str]:
    """Those of ``modules`` that cannot be imported."""
    return [name for name in modules if not _importable(name)]


def require(extra: str, feature: str) -> None:
    """Raise ``MissingExtraError`` when ``feature`` cannot work because ``extra`` is not
    installed."""
    absent = missing(extra)
    if absent:
        raise MissingExtraError(
            f"{feature} needs the {extra} extra ({', '.join(absent)} missing): "
            f"{install_line(extra)}"
        )


def extra_of(module: str) -> str | None:
    """The extra that brings the top-level ``module``, if one does."""
    top = module.partition(".")[0]
    return next((extra for extra, names in EXTRAS.items() if top in names), None)


def _importable(name: str) -> bool:
    try:
        return find_spec(name) is not None
    except (ImportError, ValueError):  # a missing parent package, or a broken install
        return False
