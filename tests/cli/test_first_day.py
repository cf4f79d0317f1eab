"""What a person meets on a first day with ``parley``: addresses, cards, and answers
shown whole, once, and the same way every time."""

from __future__ import annotations

import json
from pathlib import Path

from parley.demo import ASK_DETAILS, REPORT_SECTIONS, demo_card
from tests.cli.conftest import parley
from tests.cli.terminal import EXITED, terminal
from tests.cli.test_serve import _serve_fails


def test_an_address_without_a_scheme_suggests_the_url() -> None:
    result = parley("send", "127.0.0.1:8000", "hi")
    assert result.returncode == 2
    assert "did you mean http://127.0.0.1:8000 ?" in result.stderr
    assert "card file" in result.stderr  # it was looked for as a file too


def test_a_card_file_without_a_scheme_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "card.json").write_text(demo_card("http://127.0.0.1:1/").to_json().decode())
    result = parley("card", "card.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "parley demo agent" in result.stdout


def test_card_shows_every_version_and_binding(agent_url: str) -> None:
    shown = parley("card", agent_url).stdout
    served = json.loads(parley("card", agent_url, "--json").stdout)
    offered = {(i["protocolVersion"], i["protocolBinding"]) for i in served["supportedInterfaces"]}
    assert {version for version, _ in offered} >= {"1.0", "0.3"}
    for version, binding in offered:
        assert any(
            f"A2A {version} {binding}" in " ".join(line.split()) for line in shown.splitlines()
        ), (version, binding, shown)


def test_card_description_is_shown_whole_at_80_columns(agent_url: str) -> None:
    with terminal("card", agent_url) as screen:
        shown = screen.wait_for(EXITED)
    words = " ".join(
        line.strip("│ ").removeprefix("description").strip()
        for line in shown.splitlines()
        if line.startswith("│")
    )
    assert demo_card().description in words, shown


def test_extended_card_of_an_agent_that_has_none_says_so(agent_url: str) -> None:
    result = parley("card", agent_url, "--extended")
    assert result.returncode == 5
    assert "has no extended card" in result.stderr
    assert "credentials" not in result.stderr


def test_the_parts_of_one_artifact_are_shown_without_lines_between(agent_url: str) -> None:
    task = json.loads(parley("send", agent_url, "write a report", "--json").stdout)
    shown = parley("get", agent_url, task["id"]).stdout
    report = "".join(REPORT_SECTIONS).rstrip("\n")
    assert report in shown, shown
    assert "\n\n\n" not in shown


def test_a_data_table_keeps_its_row_order_between_runs(agent_url: str) -> None:
    def booked() -> list[str]:
        first = json.loads(parley("send", agent_url, "book a flight", "--json").stdout)
        parley("send", agent_url, "from Oslo to Rome on 2025-07-01", "--task", first["id"])
        shown = parley("send", agent_url, "yes", "--task", first["id"]).stdout
        return [line.split("│")[1].strip() for line in shown.splitlines() if line.count("│") == 3]

    rows = booked()
    assert rows == ["confirmation", "date", "from", "status", "to"], rows
    assert booked() == rows


def test_chat_asks_each_question_once_wrapped_at_words(agent_url: str) -> None:
    with terminal("chat", agent_url) as screen:
        screen.wait_for("you>")
        screen.type("book a flight")
        screen.wait_for("you>", count=2)
        screen.type("from Berlin to Helsinki on 2025-06-01")
        shown = screen.wait_for("you>", count=3)
        screen.type("/quit")
        screen.wait_for(EXITED)
    assert shown.count(ASK_DETAILS) == 1
    assert shown.count("input-required") == 2
    assert "waits for your answer" not in shown
    question = shown.split("you> from Berlin to Helsinki on 2025-06-01")[1].split("you>")[0]
    words = question.split()
    assert "Berlin" in words
    assert "Helsinki" in words
    assert "2025-06-01?" in words


def test_serve_given_the_card_says_to_name_the_agent(tmp_path: Path) -> None:
    (tmp_path / "withcard.py").write_text("from parley.demo import demo_card\ncard = demo_card()\n")
    line = _serve_fails("withcard:card", "--db", "memory", cwd=tmp_path)
    assert "withcard:card is the card" in line
    assert "AgentCard(" not in line
