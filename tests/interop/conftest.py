"""Interop fixtures: the official SDK's venv, made once per session (see ``sdk.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop.js import js_sdk as js_sdk_install
from tests.interop.sdk import sdk1_python, sdk_python


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.interop)
            # The first test pays for creating the SDK's venv (a minute or two when new).
            item.add_marker(pytest.mark.timeout(600))


@pytest.fixture(scope="session")
def sdk() -> Path:
    """The python of the venv holding the pinned official a2a-sdk."""
    return sdk_python()


@pytest.fixture(scope="session")
def sdk1() -> Path:
    """The python of the venv holding the pinned a2a-sdk 1.3 (A2A 1.0)."""
    return sdk1_python()


@pytest.fixture(scope="session")
def js_sdk() -> Path:
    """The folder of the installed @a2a-js/sdk 1.3 and its echo agent (skips without node)."""
    return js_sdk_install()
