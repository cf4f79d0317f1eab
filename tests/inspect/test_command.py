"""``parley inspect``: serves the page on 127.0.0.1 and prints the address to open."""

from __future__ import annotations

import re
import signal
import subprocess
from urllib.parse import parse_qs, urlsplit

import httpx

from parley.cli._inspect import page_address, served_hosts
from tests.servers import PARLEY, START


def test_parley_inspect_prints_an_address_that_opens_the_page() -> None:
    command = [PARLEY, "inspect", "http://127.0.0.1:8000", "--no-browser"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        try:
            address = _address(process)
            with httpx.Client(follow_redirects=True, timeout=START) as browser:
                _check_served(browser, address)
                _check_stops_with_a_feed_open(browser, address, process)
        finally:
            if process.poll() is None:
                process.terminate()
                process.wait(10)


def _address(process: subprocess.Popen[bytes]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline().decode()  # printed once it listens
    found = re.search(r"http://127\.0\.0\.1:\d+/\?\S+", line)
    assert found, line
    query = parse_qs(urlsplit(found.group(0)).query)
    assert query["agent"] == ["http://127.0.0.1:8000"]
    assert len(query["token"][0]) >= 32
    return found.group(0)


def _check_served(browser: httpx.Client, address: str) -> None:
    page = browser.get(address)
    assert page.status_code == 200
    assert "parley inspect" in page.text
    assert str(page.url).endswith("/?agent=http%3A%2F%2F127.0.0.1%3A8000")
    bare = httpx.get(address.split("?")[0], timeout=START)
    assert bare.status_code == 403  # not without the token


def _check_stops_with_a_feed_open(
    browser: httpx.Client, address: str, process: subprocess.Popen[bytes]
) -> None:
    """Ctrl-C stops the inspector although the page holds its live feed open."""
    base = address.split("?")[0].rstrip("/")
    opened = browser.post(f"{base}/api/card", json={"url": "http://127.0.0.1:9"}).json()
    with browser.stream("GET", f"{base}/api/feed/{opened['id']}") as feed:
        lines = feed.iter_lines()
        assert next(lines).startswith("data: ")  # the failed card fetch, logged
        process.send_signal(signal.SIGINT)
        assert process.wait(START) in (0, 130)  # 130: ended by SIGINT, as a shell says
        assert process.stderr is not None
        assert b"Traceback" not in process.stderr.read()


def test_the_hosts_it_answers_to() -> None:
    assert served_hosts("127.0.0.1", 5000) == ["127.0.0.1:5000", "[::1]:5000", "localhost:5000"]
    assert served_hosts("0.0.0.0", 5000) == []  # any name: token and Origin still checked
    assert page_address("::1", 5000, "t", None) == "http://[::1]:5000/?token=t"
