"""``parley check``: the list, the report, JSON, JUnit, the exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

from parley.check import CHECKS
from parley.demo import create_demo_app
from tests.check.broken import FAULTS, BrokenAgent
from tests.servers import running

PARLEY = Path(sys.executable).parent / "parley"


def parley(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PARLEY), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )


@pytest.fixture(scope="module")
def broken() -> Iterator[str]:
    with running(BrokenAgent()) as url:
        yield url


def test_list_prints_every_check() -> None:
    done = parley("check", "--list")
    assert done.returncode == 0, done.stderr
    for item in CHECKS:
        assert item.id in done.stdout


def test_a_broken_agent_is_reported_by_area_with_exit_status_1(broken: str) -> None:
    done = parley("check", broken)
    assert done.returncode == 1, done.stderr
    assert "envelope  (MUST" in done.stdout
    assert "does not conform" in done.stdout
    assert "FAIL MUST   tasks.cancel-ended [0.3 JSONRPC]" in done.stdout
    assert "FAIL" in done.stderr  # progress while it runs


def test_json_and_junit(broken: str, tmp_path: Path) -> None:
    junit = tmp_path / "check.xml"
    done = parley("check", broken, "--json", "--junit", str(junit))
    report = json.loads(done.stdout)
    assert report["ok"] is False
    failed = {r["id"] for r in report["results"] if r["status"] == "fail"}
    assert failed == set(FAULTS)
    suites = ElementTree.parse(junit).getroot()
    failures = sum(int(s.get("failures", "0")) for s in suites)
    assert failures == len([r for r in report["results"] if r["status"] == "fail"])


def test_exit_0_when_no_must_fails_unless_strict(broken: str) -> None:
    must_faults = ",".join(f for f in FAULTS if f != "envelope.content-type")
    lenient = parley("check", broken, "--skip", must_faults)
    assert lenient.returncode == 0, lenient.stdout
    assert "FAIL SHOULD envelope.content-type" in lenient.stdout
    strict = parley("check", broken, "--skip", must_faults, "--strict")
    assert strict.returncode == 1


def test_a_url_is_needed_without_list() -> None:
    done = parley("check")
    assert done.returncode == 2
    assert "--list" in done.stderr


def test_protocol_and_transport_narrow_what_is_checked() -> None:
    with running(create_demo_app()) as url:
        done = parley("check", url, "--protocol", "1.0", "--transport", "rest", "--json")
    report = json.loads(done.stdout)
    assert report["offers"] == [{"version": "1.0", "binding": "HTTP+JSON", "url": url}]
    assert {(r["version"], r["binding"]) for r in report["results"]} <= {
        ("1.0", "HTTP+JSON"), ("1.0", None), (None, None),
    }  # fmt: skip
    assert report["ok"] is True, done.stdout
