"""The official SDKs the benchmark compares with, each in a virtual environment of its own.

Both are the interop suite's venvs (``tests/interop/sdk.py``): a2a-sdk 0.3.26 in
``.interop/venv`` and a2a-sdk 1.3 (protocol v1.0) in ``.interop/venv-1``, built once and
reused while their pins are unchanged.
"""

from __future__ import annotations

from pathlib import Path

from tests.interop.sdk import sdk1_python, sdk_python


def sdk03_python() -> Path:
    """The python of the a2a-sdk 0.3.26 venv."""
    return sdk_python()


def sdk13_python() -> Path:
    """The python of the a2a-sdk 1.3 venv."""
    return sdk1_python()
