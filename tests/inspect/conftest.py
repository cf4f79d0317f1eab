"""What the inspector's tests share: the demo agent and the inspector on uvicorn on
127.0.0.1, and Debian's Chromium driven by Playwright (one browser per module)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from parley.demo import create_demo_app, demo, demo_card
from parley.inspect import create_inspector_app
from parley.server import (
    APIKeyVerifier,
    BasicVerifier,
    GRPCOptions,
    SchemeVerifier,
    SigningKeys,
    TokenVerifier,
    create_app,
)
from parley.server.push import PushSettings
from parley.types import APIKeySecurityScheme, HTTPAuthSecurityScheme
from tests.servers import ROOT, listening_socket, running

TOKEN = "the-inspector-token"
API_KEY = "the-demo-key"
PASSWORD = "the-demo-password"
BEARER = "the-demo-token"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IMAGES = ROOT / "docs" / "images"


@dataclass(frozen=True)
class Inspector:
    base: str
    """http://127.0.0.1:PORT"""
    port: int

    def address(self, **query: str) -> str:
        """The address ``parley inspect`` opens: the page with its token."""
        from urllib.parse import urlencode

        return f"{self.base}/?{urlencode({'token': TOKEN, **query})}"


@pytest.fixture(scope="module")
def agent() -> Iterator[str]:
    """The demo agent on every binding (gRPC too), signing its card and notifications,
    posting notifications to 127.0.0.1."""
    app = create_demo_app(
        push=PushSettings(allow=["127.0.0.1/32"]),
        signing_keys=SigningKeys.generate(),
        grpc=GRPCOptions(port=0),
    )
    with running(app) as url:
        yield url


@pytest.fixture(scope="module")
def guarded_agent() -> Iterator[str]:
    """The demo agent requiring credentials: an API key in header X-API-Key, or HTTP
    basic, or a bearer token."""
    card = demo_card().model_copy(
        update={
            "security_schemes": {
                "apiKey": APIKeySecurityScheme(name="X-API-Key", in_="header"),
                "basic": HTTPAuthSecurityScheme(scheme="basic"),
                "bearer": HTTPAuthSecurityScheme(scheme="bearer"),
            },
            "security": [{"apiKey": []}, {"basic": []}, {"bearer": []}],
        }
    )

    async def token(given: str) -> str | None:
        return "tester" if given == BEARER else None

    security: dict[str, SchemeVerifier] = {
        "apiKey": APIKeyVerifier({"tester": API_KEY}),
        "basic": BasicVerifier({"tester": PASSWORD}),
        "bearer": TokenVerifier(token),
    }
    with running(create_app(demo, card, security=security)) as url:
        yield url


@pytest.fixture(scope="module")
def inspector() -> Iterator[Inspector]:
    sock = listening_socket()
    port = sock.getsockname()[1]
    app = create_inspector_app(TOKEN, [f"127.0.0.1:{port}", f"localhost:{port}"], port=port)
    with running(app, sock=sock) as base:
        yield Inspector(base, port)


def chromium() -> str | None:
    """Debian's Chromium (scripts/test installs it), or another one on the PATH."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium()
    if executable is None:
        reason = "no Chromium to drive (Debian: apt-get install chromium; scripts/test does)"
        if os.environ.get("PARLEY_REQUIRE_BROWSER") == "1":
            pytest.fail(f"a browser is required (PARLEY_REQUIRE_BROWSER=1): {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, args=CHROMIUM_FLAGS, timeout=120_000
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any, inspector: Inspector) -> Iterator[Any]:
    """A fresh page; the test fails if its scripts fail, or if it asks anything of
    anyone but the inspector (everything it needs ships in the package)."""
    context = browser.new_context(viewport={"width": 1400, "height": 860})
    opened = context.new_page()
    opened.set_default_timeout(20_000)
    errors: list[str] = []
    elsewhere: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    own = (inspector.base + "/", "blob:", "data:")
    opened.on("request", lambda r: None if r.url.startswith(own) else elsewhere.append(r.url))
    try:
        yield opened
    finally:
        context.close()
    assert not errors, f"the page's scripts failed: {errors}"
    assert not elsewhere, f"the page asked for more than its own files: {elsewhere}"


def screenshot(page: Any, name: str) -> None:
    """Save the page as docs/images/NAME.png when PARLEY_SCREENSHOTS=1 asks for it."""
    if os.environ.get("PARLEY_SCREENSHOTS") == "1":
        IMAGES.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(IMAGES, f"{name}.png")))
