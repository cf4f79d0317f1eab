"""The project reads nothing outside its repository at run or test time.

A fresh clone has no folder beside it, so no tracked file may point at one: the normative
files the project needs live in ``spec/`` (see ``spec/README.md``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Spelled in two halves so that this file does not match itself.
OUTSIDE = "../" + "shared"
OUTSIDE_PATH = "/ " + '"shared"'


def _tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [ROOT / name for name in listed.split("\0") if name]


def test_no_file_refers_outside_the_repository() -> None:
    offenders = []
    for path in _tracked_files():
        if not path.is_file() or path.suffix in {".lock", ".png"}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if OUTSIDE in text or OUTSIDE_PATH in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == [], f"files that read outside the repository: {offenders}"


def test_normative_files_are_in_the_repository() -> None:
    for name in ("v0.3.0/a2a.json", "v0.3.0/a2a.proto", "v1.0.1/a2a.proto"):
        assert (ROOT / "spec" / name).stat().st_size > 10_000, name
