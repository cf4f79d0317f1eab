"""Which A2A protocol versions parley speaks, and the version a request asks for
(v1.0.1 §3.6: ``Major.Minor`` in the ``A2A-Version`` header or request parameter; an empty
one means 0.3; patch numbers never count)."""

from __future__ import annotations

from parley.protocol._errors import VersionNotSupportedError

V0_3 = "0.3"
V1_0 = "1.0"
SUPPORTED_VERSIONS: tuple[str, ...] = (V1_0, V0_3)
"""Newest first: the order a client prefers them in."""
VERSION_HEADER = "a2a-version"


def major_minor(version: str) -> str:
    """``1.0.1`` -> ``1.0``; ``1`` -> ``1.0``; ``0.3.0`` -> ``0.3``."""
    parts = version.strip().lstrip("vV").split(".")
    return f"{parts[0]}.{parts[1] if len(parts) > 1 else '0'}"


def requested_version(value: str | None) -> str | None:
    """The supported version ``value`` names, or ``None`` when it names none (absent or
    empty: the binding decides, 0.3 unless the request can only be v1.0).

    Raises ``VersionNotSupportedError`` for any other version.
    """
    if value is None or not value.strip():
        return None
    version = major_minor(value)
    if version not in SUPPORTED_VERSIONS:
        raise VersionNotSupportedError(
            f"A2A version {value.strip()} is not supported; this agent speaks "
            f"{' and '.join(SUPPORTED_VERSIONS)}",
            data={"supportedVersions": list(SUPPORTED_VERSIONS)},
        )
    return version
