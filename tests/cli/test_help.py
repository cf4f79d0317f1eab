"""``parley ... --help`` as a person reads it: every option's value named plainly, and
the help's own words shown as written (rich would turn ``:name:`` into an emoji)."""

from __future__ import annotations

import re
import unicodedata

import pytest

from tests.cli.conftest import parley

COMMANDS = [
    [],
    ["serve"],
    ["card"],
    ["send"],
    ["get"],
    ["cancel"],
    ["resubscribe"],
    ["chat"],
    ["listen"],
    ["db", "upgrade"],
]


def _symbols(text: str) -> set[str]:
    """Pictographs and other symbols in ``text``, beside the box drawing help is framed in."""
    return {
        char
        for char in text
        if unicodedata.category(char) == "So" and not 0x2500 <= ord(char) <= 0x257F
    }


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "parley")
def test_help_names_values_plainly_and_shows_no_emoji(command: list[str]) -> None:
    result = parley(*command, "--help")
    assert result.returncode == 0, result.stderr
    shown = result.stdout
    assert _symbols(shown) == set(), shown
    options = shown.partition("Options")[2]
    assert re.search(r"<(bool|list\[\w+\]|str|int|float|path)>", options) is None, options


def test_serve_help_shows_name_and_secret() -> None:
    shown = parley("serve", "--help").stdout
    assert "--api-key" in shown
    assert "NAME:SECRET" in shown
    line = next(line for line in shown.splitlines() if "--help" in line)
    assert "bool" not in line
