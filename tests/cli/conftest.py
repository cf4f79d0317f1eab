"""The demo agent served for the CLI tests, and a way to run ``parley`` as a person would."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from parley.demo import create_demo_app
from tests.servers import running

PARLEY = Path(sys.executable).parent / "parley"


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    with running(create_demo_app()) as url:
        yield url


def parley(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``parley`` command; never raises on a non-zero exit."""
    return subprocess.run(
        [str(PARLEY), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )
