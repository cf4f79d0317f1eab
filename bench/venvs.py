"""The official SDKs the benchmark compares with, each in a virtual environment of its own.

a2a-sdk 0.3.26 is the interop suite's venv (``.interop/venv``, ``tests/interop/sdk.py``);
a2a-sdk 1.3 (protocol v1.0) gets ``.interop/venv-sdk13``, built the same way, with the
extras its docs name for an HTTP server.
"""

from __future__ import annotations

from pathlib import Path

from tests.interop.sdk import ROOT, sdk_python, venv_python

SDK13_VERSION = "1.3.0"
SDK13_REQUIREMENTS = (f"a2a-sdk[http-server]=={SDK13_VERSION}", "uvicorn[standard]>=0.30")
SDK13_VENV = ROOT / ".interop" / "venv-sdk13"


def sdk03_python() -> Path:
    """The python of the a2a-sdk 0.3.26 venv."""
    return sdk_python()


def sdk13_python() -> Path:
    """The python of the a2a-sdk 1.3 venv."""
    return venv_python(SDK13_VENV, SDK13_REQUIREMENTS)
