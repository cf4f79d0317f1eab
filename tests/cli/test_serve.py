"""`parley serve` run as a person would: a subprocess on 127.0.0.1."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import httpx

from tests.servers import parley_serve

PARLEY = str(Path(sys.executable).with_name("parley"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_serve_starts_the_demo_agent_and_says_where() -> None:
    """``--port 0``: the system picks a free port, and the first line says which."""
    process = subprocess.Popen(
        [PARLEY, "serve", "--port", "0", "--db", "memory"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        banner = [process.stderr.readline()]  # once the agent has started
        while "try:" not in banner[-1] and banner[-1]:
            banner.append(process.stderr.readline())
        found = re.search(r"serving parley demo agent at http://127\.0\.0\.1:(\d+)/$", banner[0])
        assert found, f"parley serve said {banner!r}"
        port = int(found.group(1))
        assert port != 0
        assert banner[-1].strip() == f"try:  parley chat http://127.0.0.1:{port}/"
        card = httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json").json()
        assert card["name"] == "parley demo agent"
        assert card["url"] == f"http://127.0.0.1:{port}/"
        reply = httpx.post(
            f"http://127.0.0.1:{port}/",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "message/send",
                "params": {
                    "message": {
                        "role": "user",
                        "messageId": "m",
                        "parts": [{"kind": "text", "text": "tell me a joke"}],
                    }
                },
            },
        ).json()
        assert reply["result"]["status"]["state"] == "completed"
        assert "agent" in reply["result"]["artifacts"][0]["parts"][0]["text"]
    finally:
        process.terminate()
        process.communicate(timeout=10)


def _serve_fails(*args: str, cwd: Path | None = None) -> str:
    """Run ``parley serve *args``, which must refuse to start: exit 2, nothing announced,
    one line on stderr (never a traceback). Returns that line."""
    result = subprocess.run(
        [PARLEY, "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "80", "NO_COLOR": "1"},
    )
    assert result.returncode == 2, result.stderr
    assert "serving" not in result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_a_db_that_cannot_be_used_is_one_line_before_anything_is_announced(
    tmp_path: Path,
) -> None:
    port = "0"
    assert "--db garbage" in _serve_fails("--db", "garbage", "--port", port)
    assert "SQLite or PostgreSQL" in _serve_fails("--db", "mysql://u@h/db", "--port", port)
    missing = f"sqlite:///{tmp_path}/no/such/folder/tasks.db"
    line = _serve_fails("--db", missing, "--port", port)
    assert "unable to open database file" in line
    assert missing in line
    dead = f"postgresql://parley:secret@127.0.0.1:{free_port()}/parley"
    line = _serve_fails("--db", dead, "--port", port)
    assert "the task store cannot be used" in line
    assert "secret" not in line  # the password is never printed
    assert "parley:***@127.0.0.1" in line


def test_db_for_a_module_that_builds_its_own_app_is_refused(tmp_path: Path) -> None:
    (tmp_path / "myagent.py").write_text(
        "from parley.demo import create_demo_app\napp = create_demo_app()\n"
    )
    line = _serve_fails("myagent:app", "--db", "memory", cwd=tmp_path)
    assert "--db does not apply to myagent:app" in line


def test_an_agent_class_instead_of_an_instance_is_refused(tmp_path: Path) -> None:
    (tmp_path / "classy.py").write_text(
        "from examples_card import card\n\n"
        "class Greeter:\n"
        "    async def execute(self, context, events): ...\n"
        "    async def cancel(self, context, events): ...\n"
    )
    (tmp_path / "examples_card.py").write_text(
        "from parley.demo import demo_card\ncard = demo_card()\n"
    )
    line = _serve_fails("classy:Greeter", "--db", "memory", cwd=tmp_path)
    assert "the class Greeter" in line
    assert "Greeter()" in line


def test_a_module_that_raises_at_import_is_one_line_naming_where(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("x = 1\nraise RuntimeError('no config found')\n")
    line = _serve_fails("broken:app", cwd=tmp_path)
    assert "cannot import 'broken': RuntimeError: no config found" in line
    assert "broken.py, line 2" in line


def test_an_app_built_from_an_agent_class_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "classy_app.py").write_text(
        "from parley.demo import demo_card\n"
        "from parley.server import create_app\n\n"
        "class Greeter:\n"
        "    async def execute(self, context, events): ...\n"
        "    async def cancel(self, context, events): ...\n\n"
        "app = create_app(Greeter, demo_card())\n"
    )
    line = _serve_fails("classy_app:app", cwd=tmp_path)
    assert "the class Greeter" in line
    assert "Greeter()" in line
    assert "classy_app.py, line 8" in line


def test_a_card_that_lacks_fields_names_them_on_one_line(tmp_path: Path) -> None:
    (tmp_path / "thin.py").write_text(
        "from parley.types import AgentCard\n"
        "card = AgentCard(name='thin', description='d', url='', version='1')\n"
    )
    line = _serve_fails("thin:app", cwd=tmp_path)
    for field in ("capabilities", "defaultInputModes", "defaultOutputModes", "skills"):
        assert field in line
    assert "thin.py, line 2" in line


def test_files_a_sqlite_store_leaves_beside_its_database_are_git_ignored(
    tmp_path: Path,
) -> None:
    """``parley serve`` keeps ``parley.db`` in the current folder by default: neither it
    nor its lock, journal or WAL shows up as a change in a user's repository."""
    patterns = (Path(__file__).parents[2] / ".gitignore").read_text().splitlines()
    with parley_serve(["--db", f"sqlite:///{tmp_path}/parley.db"], tmp_path / "serve.log"):
        left = {p.name for p in tmp_path.iterdir() if p.name.startswith("parley.db")}
    assert "parley.db.lock" in left
    for name in [*left, "parley.db-wal", "parley.db-shm", "parley.db-journal"]:
        assert any(fnmatch(name, pattern) for pattern in patterns), name


def test_ports_in_use_are_refused() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        line = _serve_fails("--db", "memory", "--port", port)
        assert f"cannot listen on 127.0.0.1:{port}" in line
        line = _serve_fails("--db", "memory", "--port", "0", "--grpc-port", port)
        assert f"127.0.0.1:{port}" in line


def test_help_and_version() -> None:
    """rich markup must not eat ``[grpc]`` in the help; ``--version`` answers."""
    help_text = subprocess.run(
        [PARLEY, "serve", "--help"], capture_output=True, text=True, env={"COLUMNS": "200"}
    ).stdout
    assert "parley-a2a[grpc]" in help_text
    version = subprocess.run([PARLEY, "--version"], capture_output=True, text=True)
    assert version.returncode == 0
    assert version.stdout.startswith("parley ")


def test_uvicorn_logs_access_only_at_a_level_that_writes_it() -> None:
    """Access lines are INFO: above that level uvicorn is not asked to make them (it would
    work out each request's client and path for a line its logger drops)."""
    from parley.cli._serve import uvicorn_config

    for level in ("critical", "error", "warning", "WARNING"):
        assert uvicorn_config(None, level).access_log is False, level
    for level in ("info", "debug", "trace", "INFO"):
        assert uvicorn_config(None, level).access_log is True, level


def test_serve_at_info_writes_an_access_line_per_request_and_at_warning_none() -> None:
    for level, written in (("info", True), ("warning", False)):
        port = free_port()
        process = subprocess.Popen(
            [PARLEY, "serve", "--port", str(port), "--db", "memory", "--log-level", level],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stderr is not None
            line = process.stderr.readline()
            while "try:" not in line and line:
                line = process.stderr.readline()
            card = httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json")
            assert card.status_code == 200
        finally:
            process.terminate()
            out, err = process.communicate(timeout=10)
        access = '"GET /.well-known/agent-card.json HTTP/1.1" 200'
        assert (access in out + err) is written, (level, out, err)


def test_serve_closes_the_store_db_opened_when_it_stops(tmp_path: Path) -> None:
    """The SQLite store ``--db`` opened is closed at exit, after the agent stops: its
    last connection folds the WAL into the database and removes it, and a second
    ``parley serve`` finds the task the first stored."""
    database = tmp_path / "tasks.db"
    arguments = ["--db", f"sqlite+aiosqlite:///{database}"]
    send = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {"role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "hi"}]}
        },
    }
    with parley_serve(arguments, tmp_path / "first.log") as (_, base):
        task_id = httpx.post(f"{base}/", json=send).json()["result"]["id"]
        assert Path(f"{database}-wal").exists()  # the store is open and writing
    assert not Path(f"{database}-wal").exists(), (tmp_path / "first.log").read_text()
    get = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task_id}}
    with parley_serve(arguments, tmp_path / "second.log") as (_, base):
        task = httpx.post(f"{base}/", json=get).json()["result"]
    assert task["status"]["state"] == "completed"
    assert not Path(f"{database}-wal").exists(), (tmp_path / "second.log").read_text()
