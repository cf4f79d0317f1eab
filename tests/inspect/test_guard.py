"""The inspector answers only its own page: its Host, its Origin, its token."""

from __future__ import annotations

import httpx

from tests.inspect.conftest import TOKEN, Inspector


def test_without_the_token_nothing_is_served(inspector: Inspector) -> None:
    for path in ("/", "/static/inspector.js", "/api/feed/x"):
        answer = httpx.get(inspector.base + path)
        assert answer.status_code == 403
        assert "needs its token" in answer.text
    assert httpx.post(f"{inspector.base}/api/card", json={"url": "http://x"}).status_code == 403
    assert httpx.get(f"{inspector.base}/?token=wrong").status_code == 403


def test_the_token_in_the_address_becomes_a_cookie(inspector: Inspector) -> None:
    with httpx.Client(base_url=inspector.base) as browser:
        answer = browser.get("/", params={"token": TOKEN, "agent": "http://127.0.0.1:1"})
        assert answer.status_code == 303
        assert answer.headers["location"] == "/?agent=http%3A%2F%2F127.0.0.1%3A1"
        cookie = answer.headers["set-cookie"]
        assert f"parley-inspect-{inspector.port}={TOKEN}" in cookie
        assert "HttpOnly" in cookie
        assert "SameSite=strict" in cookie
        page = browser.get(answer.headers["location"])
        assert page.status_code == 200
        assert "<title>parley inspect</title>" in page.text


def test_another_host_is_refused_even_with_the_token(inspector: Inspector) -> None:
    # a page on another name resolving to 127.0.0.1 (DNS rebinding) sends its own Host
    cookies = {f"parley-inspect-{inspector.port}": TOKEN}
    answer = httpx.get(
        inspector.base + "/",
        headers={"Host": f"attacker.example:{inspector.port}"},
        cookies=cookies,
    )
    assert answer.status_code == 403
    assert "not served as attacker.example" in answer.text


def test_another_origin_is_refused_even_with_the_token(inspector: Inspector) -> None:
    cookies = {f"parley-inspect-{inspector.port}": TOKEN}
    answer = httpx.post(
        f"{inspector.base}/api/card",
        json={"url": "http://127.0.0.1:1"},
        headers={"Origin": "https://attacker.example"},
        cookies=cookies,
    )
    assert answer.status_code == 403
    assert "https://attacker.example" in answer.text
    own = httpx.post(
        f"{inspector.base}/api/card",
        json={"url": "http://127.0.0.1:1"},
        headers={"Origin": inspector.base},
        cookies=cookies,
    )
    assert own.status_code == 200


def test_notifications_need_no_token_but_a_valid_signature(inspector: Inspector) -> None:
    answer = httpx.post(f"{inspector.base}/push/unknown", json={})
    assert answer.status_code == 404  # past the guard, to a connection that is not there
