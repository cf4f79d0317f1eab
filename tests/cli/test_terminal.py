"""The CLI in a real terminal (tmux, 80 columns): answers stay on the screen while the
spinner runs on stderr beside them, and nothing of the spinner is left behind. Piped
output is checked in test_commands; this is what a person sees."""

from __future__ import annotations

from parley.demo import JOKE, REPORT_SECTIONS
from tests.cli.terminal import EXITED, terminal

SPINNER = "waiting for the agent"


def test_send_stream_leaves_the_short_answer_on_the_screen(agent_url: str) -> None:
    """Spec 7.2 (message/stream) as shown to a person: a one-chunk answer stays."""
    with terminal("send", agent_url, "tell me a joke", "--stream") as screen:
        shown = screen.wait_for(EXITED)
    assert JOKE in shown.splitlines()
    assert SPINNER not in shown
    assert f"{EXITED}0]" in shown


def test_send_stream_shows_a_long_answer_without_spinner_debris(agent_url: str) -> None:
    with terminal("send", agent_url, "write a report", "--stream") as screen:
        shown = screen.wait_for(EXITED)
    lines = shown.splitlines()
    for section in REPORT_SECTIONS:
        for line in section.strip("\n").splitlines():
            assert line in lines, f"{line!r} is not a line of the screen:\n{shown}"
    assert SPINNER not in shown
    assert "task working" not in shown


def test_chat_shows_each_answer(agent_url: str) -> None:
    with terminal("chat", agent_url) as screen:
        screen.wait_for("you>")
        screen.type("tell me a joke")
        screen.wait_for("you>", count=2)
        screen.type("write a report")
        shown = screen.wait_for("you>", count=3)
        screen.type("/quit")
        screen.wait_for(EXITED)
    lines = shown.splitlines()
    assert JOKE in lines
    assert "A2A lets agents built by different teams work together." in lines
    assert SPINNER not in shown


def test_ids_are_never_cut_at_80_columns(agent_url: str) -> None:
    with terminal("send", agent_url, "tell me a joke") as screen:
        shown = screen.wait_for(EXITED)
    task_line = next(line for line in shown.splitlines() if line.startswith("task "))
    context_line = next(line for line in shown.splitlines() if line.startswith("context "))
    assert len(task_line.split()[1]) == 36  # a whole UUID on the task's line
    assert len(context_line.split()[1]) == 36
