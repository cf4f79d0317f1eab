"""``parley`` run as a subprocess against the served demo agent: output and exit codes."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from parley.demo import ASK_DETAILS, JOKE
from tests.cli.conftest import parley


def test_card_shows_the_agent(agent_url: str) -> None:
    """Spec 5.3, 5.5: the card is fetched from the base URL and shown readably."""
    result = parley("card", agent_url)
    assert result.returncode == 0, result.stderr
    assert "parley demo agent" in result.stdout
    assert "Flight booking" in result.stdout
    card = json.loads(parley("card", agent_url, "--json").stdout)
    assert card["preferredTransport"] == "JSONRPC"


def test_bad_card_lists_its_problems(tmp_path: Path) -> None:
    """Spec 5.5: a card missing required fields is refused, naming each field (exit 4)."""
    path = tmp_path / "card.json"
    path.write_text('{"name": "x"}')
    result = parley("card", str(path))
    assert result.returncode == 4
    assert "description: Field required" in result.stderr
    assert "Traceback" not in result.stderr


def test_send_prints_the_reply(agent_url: str) -> None:
    """Spec 7.1: message/send; the artifact's text is printed."""
    result = parley("send", agent_url, "tell me a joke")
    assert result.returncode == 0, result.stderr
    assert JOKE in result.stdout
    assert "completed" in result.stdout


def test_send_stream_prints_events_as_json_lines(agent_url: str) -> None:
    """Spec 7.2: with --stream --json each event is one JSON line, in order."""
    result = parley("send", agent_url, "write a report", "--stream", "--json")
    assert result.returncode == 0, result.stderr
    kinds = [json.loads(line)["kind"] for line in result.stdout.splitlines()]
    assert kinds[0] == "task"
    assert kinds.count("artifact-update") == 5
    assert kinds[-1] == "status-update"


def test_send_stream_for_people(agent_url: str) -> None:
    """Spec 7.2: streamed text is printed as it arrives, then the final state."""
    result = parley("send", agent_url, "write a report", "--stream")
    assert result.returncode == 0, result.stderr
    assert "## Conclusion" in result.stdout
    assert result.stdout.strip().endswith("completed")


def test_send_file_and_data_then_get_and_cancel(agent_url: str, tmp_path: Path) -> None:
    """Spec 6.5 (file and data parts), 7.3 (tasks/get), 7.4 (tasks/cancel)."""
    note = tmp_path / "note.txt"
    note.write_text("hello")
    result = parley("send", agent_url, "here", "--file", str(note), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    task = json.loads(result.stdout)
    assert task["artifacts"][0]["name"] == "echo-note.txt"
    shown = parley("get", agent_url, task["id"], "--save-dir", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert (tmp_path / "echo-note.txt").read_text() == "hello"
    waiting = json.loads(parley("send", agent_url, "book a flight", "--json").stdout)
    assert waiting["status"]["state"] == "input-required"
    canceled = parley("cancel", agent_url, waiting["id"])
    assert canceled.returncode == 0, canceled.stderr
    assert "canceled" in canceled.stdout
    again = parley("get", agent_url, waiting["id"], "--history", "1")
    assert again.returncode == 1  # a canceled task is not a success
    again_canceled = parley("cancel", agent_url, waiting["id"])  # idempotent (spec 7.4)
    assert again_canceled.returncode == 0, again_canceled.stderr
    done = json.loads(parley("send", agent_url, "tell me a joke", "--json").stdout)
    assert parley("cancel", agent_url, done["id"]).returncode == 5  # completed: not cancelable


def test_multi_turn_with_context_and_task(agent_url: str) -> None:
    """Spec 6.3: --task and --context continue an input-required task."""
    first = json.loads(parley("send", agent_url, "book a flight", "--json").stdout)
    assert first["status"]["message"]["parts"][0]["text"] == ASK_DETAILS
    ids = ("--task", first["id"], "--context", first["contextId"])
    second = parley("send", agent_url, "from Oslo to Rome on 2025-07-01", *ids)
    assert "input-required" in second.stdout
    third = parley("send", agent_url, "yes", *ids, "--json")
    assert json.loads(third.stdout)["status"]["state"] == "completed"


def test_resubscribe_to_a_finished_task(agent_url: str) -> None:
    """v1.0.1 3.1.6: subscribing to a task in a terminal state is refused
    (UnsupportedOperationError), and the command says why."""
    task = json.loads(parley("send", agent_url, "tell me a joke", "--json").stdout)
    result = parley("resubscribe", agent_url, task["id"])
    assert result.returncode != 0
    assert "UnsupportedOperationError" in result.stderr
    assert "terminal state" in result.stderr


def test_no_wait_returns_before_the_end(agent_url: str) -> None:
    """Spec 7.1 (blocking false): the task comes back at once, possibly still working."""
    result = parley("send", agent_url, "write a report", "--no-wait", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["kind"] == "task"


def test_errors_are_one_line_with_exit_codes(agent_url: str, tmp_path: Path) -> None:
    """Spec 8.2 and 3.1: task not found (5), unreachable (3), not an agent (4), bad
    input (2); one line on stderr, never a traceback."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    cases = [
        (("get", agent_url, "no-such-task"), 5, "TaskNotFoundError"),
        (("send", dead, "hi"), 3, "Cannot reach"),
        (("card", agent_url + "/health"), 4, "not an A2A agent"),
        (("send", agent_url, "hi", "--data", "{nope"), 2, "--data is not valid JSON"),
        (("send", agent_url, "hi", "--transport", "pigeon"), 2, "--transport must be one of"),
        (("send", agent_url, "hi", "--transport", "grpc"), 3, "parley serve --grpc-port"),
    ]
    for args, code, text in cases:
        result = parley(*args)
        assert result.returncode == code, (args, result.stderr)
        assert text in result.stderr
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_the_version_and_binding_used_are_shown(agent_url: str) -> None:
    """v1.0.1 §3.6.3: the newest version both speak by default, or the one asked for; the
    command says which version and binding it used."""
    newest = parley("send", agent_url, "tell me a joke")
    assert newest.returncode == 0, newest.stderr
    assert "speaking A2A 1.0 over JSONRPC" in newest.stderr
    forced = parley("send", agent_url, "tell me a joke", "--protocol", "0.3")
    assert forced.returncode == 0, forced.stderr
    assert JOKE in forced.stdout
    assert "speaking A2A 0.3 over JSONRPC" in forced.stderr
    unknown = parley("send", agent_url, "hi", "--protocol", "0.5")
    assert unknown.returncode == 2
    assert "--protocol must be one of 1.0, 0.3, 2025-early" in unknown.stderr


def test_a_card_error_keeps_the_whole_url(tmp_path: Path) -> None:
    """The error line of a bad card names where it came from, URL and all (it used to be
    cut at the first colon: 'error: the card at http:')."""
    path = tmp_path / "card.json"
    path.write_text('{"name": "x"}')
    result = parley("card", str(path))
    assert result.returncode == 4
    first = result.stderr.strip().splitlines()[0]
    assert str(path) in first
    assert first.endswith("is not a valid agent card:")


def test_a_tenant_keeps_its_tasks_apart(agent_url: str) -> None:
    """v1.0.1 §8.3.2: ``--tenant`` goes in every request (JSON-RPC and HTTP+JSON alike);
    another tenant, or none, does not find the task."""
    sent = parley("send", agent_url, "book a flight", "--tenant", "acme", "--json")
    assert sent.returncode == 0, sent.stderr
    task = json.loads(sent.stdout)
    for transport in ("jsonrpc", "rest"):
        found = parley("get", agent_url, task["id"], "--tenant", "acme", "-t", transport)
        assert found.returncode == 0, found.stderr
        assert "input-required" in found.stdout
        for elsewhere in (("--tenant", "globex"), ()):
            missing = parley("get", agent_url, task["id"], *elsewhere, "-t", transport)
            assert missing.returncode == 5, missing.stderr
            assert "TaskNotFoundError" in missing.stderr
    answered = parley(
        "send", agent_url, "from Oslo to Rome", "--task", task["id"], "--tenant", "acme"
    )
    assert answered.returncode == 0, answered.stderr
    canceled = parley("cancel", agent_url, task["id"], "--tenant", "acme")
    assert canceled.returncode == 0, canceled.stderr
    assert "canceled" in canceled.stdout


def test_a_tenant_is_not_dropped_in_silence(agent_url: str) -> None:
    """v0.3 requests carry no tenant: asking for one there is refused, not ignored."""
    refused = parley("get", agent_url, "t-1", "--tenant", "acme", "--protocol", "0.3")
    assert refused.returncode == 2
    assert "--tenant is A2A 1.0's" in refused.stderr
