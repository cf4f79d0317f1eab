"""docs/check.md lists every check with its spec sections, as the check data says."""

from __future__ import annotations

import re
from pathlib import Path

from parley.check import CHECKS, markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "check.md"


def test_the_doc_lists_every_check_as_the_data_says() -> None:
    text = DOC.read_text()
    found = re.search(r"<!-- checks:[^>]*-->\n(.*?)<!-- end of checks -->", text, re.DOTALL)
    assert found, "docs/check.md has lost its table markers"
    assert found.group(1) == markdown(CHECKS), "regenerate the table: parley.check.markdown"


def test_every_check_names_a_section_of_a_version_it_runs_on() -> None:
    for check in CHECKS:
        specs = {"1.0": "1.0.1", "0.3": "0.3.0", "2025-early": "0.3.0"}
        assert check.sections, check.id
        versions = {v for v in check.needs.versions if specs[v] in check.sections}
        assert versions, f"{check.id} runs on no version it names a section of"
        assert re.fullmatch(r"[a-z]+\.[a-z0-9.-]+", check.id), check.id
