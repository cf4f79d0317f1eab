"""The CLI in a real terminal (tmux, 80 columns): answers stay on the screen while the
spinner runs on stderr beside them, and nothing of the spinner is left behind. Piped
output is checked in test_commands; this is what a person sees."""

from __future__ import annotations

import json
import re
from pathlib import Path

from parley.demo import JOKE, REPORT_SECTIONS
from tests.cli.conftest import parley
from tests.cli.terminal import EXITED, terminal
from tests.servers import parley_serve

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


def _task_id(shown: str) -> str:
    found = re.search(r"stopped following task (\S+?)[;:]", " ".join(shown.split()))
    assert found, shown
    return found.group(1)


def test_ctrl_c_in_send_stream_says_how_to_resubscribe_or_cancel(agent_url: str) -> None:
    with terminal("send", agent_url, "count to 30", "--stream") as screen:
        screen.wait_for("\n2")
        screen.press("C-c")
        shown = screen.wait_for(EXITED)
    task_id = _task_id(shown)
    lines = [line.strip() for line in shown.splitlines()]
    assert f"parley resubscribe {agent_url} {task_id}" in lines
    assert f"parley cancel {agent_url} {task_id}" in lines
    assert f"{EXITED}130]" in shown
    assert "Traceback" not in shown
    still = json.loads(parley("get", agent_url, task_id, "--json").stdout)
    assert still["status"]["state"] == "working"  # the task goes on
    parley("cancel", agent_url, task_id)


def test_ctrl_c_in_a_chat_turn_stops_following_offers_to_cancel_and_stays(
    agent_url: str,
) -> None:
    with terminal("chat", agent_url) as screen:
        screen.wait_for("you>")
        screen.type("count to 30")
        screen.wait_for("\n2")
        screen.press("C-c")
        shown = screen.wait_for("cancel it? [y/N]")
        task_id = _task_id(shown)
        assert "it goes on" in shown
        screen.type("y")
        screen.wait_for("you>", count=2)
        screen.type("tell me a joke")
        shown = screen.wait_for("you>", count=3)
        screen.type("/quit")
        shown = screen.wait_for(EXITED)
    assert f"task {task_id} canceled" in " ".join(shown.split())
    assert JOKE in shown.splitlines()
    assert f"{EXITED}0]" in shown
    assert "Traceback" not in shown
    after = json.loads(parley("get", agent_url, task_id, "--json").stdout)
    assert after["status"]["state"] == "canceled"


def test_ctrl_c_in_a_chat_turn_leaves_the_task_running_when_told_not_to_cancel(
    agent_url: str,
) -> None:
    with terminal("chat", agent_url) as screen:
        screen.wait_for("you>")
        screen.type("count to 30")
        screen.wait_for("\n2")
        screen.press("C-c")
        task_id = _task_id(screen.wait_for("cancel it? [y/N]"))
        screen.type("")
        screen.wait_for("you>", count=2)
        screen.type("/quit")
        screen.wait_for(EXITED)
    after = json.loads(parley("get", agent_url, task_id, "--json").stdout)
    assert after["status"]["state"] == "working"
    parley("cancel", agent_url, task_id)


def test_send_in_a_terminal_shows_the_progress_then_the_answer(agent_url: str) -> None:
    """Without --stream, a person still sees the task's status messages as they come;
    the answer is shown as a blocking send shows it."""
    asked = json.loads(
        parley("send", agent_url, "book a flight from Oslo to Rome on 2025-07-01", "--json").stdout
    )
    with terminal("send", agent_url, "yes", "--task", asked["id"]) as screen:
        shown = screen.wait_for(EXITED)
    lines = shown.splitlines()
    progress = lines.index("working: Booking the flight...")
    done = next(n for n, line in enumerate(lines) if line.startswith("task "))
    assert progress < done
    assert lines[done] == f"task {asked['id']} completed"
    assert any("Rome" in line for line in lines[done:])
    assert SPINNER not in shown
    assert f"{EXITED}0]" in shown


def test_send_piped_shows_no_progress(agent_url: str) -> None:
    asked = json.loads(
        parley("send", agent_url, "book a flight from Oslo to Rome on 2025-07-01", "--json").stdout
    )
    result = parley("send", agent_url, "yes", "--task", asked["id"])
    assert "Booking the flight" not in result.stdout + result.stderr
    assert f"task {asked['id']} completed" in result.stdout


def test_a_stream_whose_agent_dies_says_it_reconnects_then_gives_up_clearly(
    tmp_path: Path,
) -> None:
    with (
        parley_serve(["--db", "memory"], tmp_path / "serve.log") as (server, base),
        terminal("send", base, "count to 60", "--stream") as screen,
    ):
        screen.wait_for("\n2")
        server.kill()  # the agent dies mid-stream
        server.wait(10)
        shown = screen.wait_for("reconnecting to the agent (attempt", timeout=20)
        assert "trying for 30 s" in " ".join(shown.split())
        shown = screen.wait_for(EXITED, timeout=60)
    words = " ".join(shown.split())
    assert "could not be resumed in 30" in words
    assert re.search(r"\(\d+ attempts\)", words), words
    task_id = re.search(r"gave up following task (\S+?);", words)
    assert task_id, words
    assert f"parley resubscribe {base} {task_id.group(1)}" in words
    assert f"{EXITED}3]" in shown
    assert "Traceback" not in shown
