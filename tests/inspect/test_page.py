"""The inspector in a real browser (headless Chromium) against the demo agent: connect,
read the card, a multi-turn booking, a streamed report over gRPC, cancel and resume,
push notifications, the agent's errors."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.inspect.conftest import PASSWORD, Inspector, screenshot

pytestmark = pytest.mark.timeout(180)


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def open_connected(page: Any, inspector: Inspector, agent: str, **query: str) -> None:
    """The page opened on the address ``parley inspect URL`` gives, once connected."""
    page.goto(inspector.address(agent=agent, **query))
    expect(page.locator("#connection-status")).to_contain_text("connected to parley demo agent")


def say(page: Any, text: str) -> None:
    page.fill("#message", text)
    page.click("#send")


def test_opens_connected_to_the_agent_its_address_names(
    page: Any, inspector: Inspector, agent: str
) -> None:
    open_connected(page, inspector, agent)
    assert "token" not in page.url  # the token went into a cookie, out of the address
    expect(page.locator("#card-name")).to_contain_text("parley demo agent")
    expect(page.locator("#signature")).to_contain_text("signature verified")
    interfaces = page.locator("#interfaces")
    for binding in ("JSONRPC", "GRPC", "HTTP+JSON"):
        expect(interfaces).to_contain_text(binding)
    expect(page.locator("#skills")).to_contain_text("Flight booking")
    page.click("button[data-view=raw-view]")
    expect(page.locator("#raw-view")).to_contain_text('"signatures"')
    page.click("button[data-view=card-view]")
    screenshot(page, "inspect-card")
    # the card checks of parley check, run on the agent
    page.click("button[data-view=checks-view]")
    signatures = page.locator("#check-results tr").filter(has_text="card.signatures")
    expect(signatures).to_contain_text("pass", timeout=60_000)
    failed = page.locator("#check-results tr.fail").count()
    expect(page.locator("#checks-count")).to_have_text(f"({failed} failed)" if failed else "✓")
    screenshot(page, "inspect-checks")


def test_a_multi_turn_booking_stays_in_one_task(
    page: Any, inspector: Inspector, agent: str
) -> None:
    open_connected(page, inspector, agent)
    say(page, "book a flight to Helsinki")
    expect(page.locator("#task-state")).to_have_text("input-required")
    expect(page.locator("#messages")).to_contain_text("Where are you flying from")
    first = page.locator(".lane").first.get_attribute("data-task")
    say(page, "from Oslo on 2026-12-24")
    expect(page.locator("#messages")).to_contain_text("Please confirm consent")
    say(page, "yes")
    expect(page.locator("#task-state")).to_have_text("completed")
    booking = page.locator(".artifact .data")
    expect(booking).to_contain_text('status: "booked"')
    expect(booking).to_contain_text('to: "Helsinki"')
    lanes = page.locator(".lane")
    expect(lanes).to_have_count(1)  # the three turns are one task
    assert lanes.first.get_attribute("data-task") == first
    expect(lanes.first).to_contain_text("input-required")
    page.click("button[data-view=wire-view]")
    sent = page.locator(".wire.request .body").filter(has_text="yes")
    expect(sent).to_contain_text(f'"taskId": "{first}"')
    expect(page.locator(".wire.request .curl").first).to_contain_text("curl")
    page.click("button[data-view=timeline-view]")
    screenshot(page, "inspect-chat")
    # the task is over: the next message is a new task of the same context, beside it
    say(page, "tell me a joke")
    expect(lanes).to_have_count(2)
    expect(page.locator(".context")).to_have_count(1)
    expect(lanes.nth(1)).to_contain_text("completed")
    assert lanes.nth(1).get_attribute("data-task") != first


def test_a_report_streams_over_grpc(page: Any, inspector: Inspector, agent: str) -> None:
    open_connected(page, inspector, agent, version="1.0", binding="GRPC")
    expect(page.locator("#session-status")).to_contain_text("over GRPC")
    say(page, "write a report")
    report = page.locator(".artifact pre.text")
    expect(report).to_contain_text("## Conclusion")
    expect(page.locator("#task-state")).to_have_text("completed")
    assert report.inner_text().index("# Report") < report.inner_text().index("## Summary")
    chunks = page.locator(".lane .step").filter(has_text="artifact chunk")
    expect(chunks).to_have_count(4)  # the first section opened it, four were appended
    page.click("button[data-view=wire-view]")
    expect(page.locator(".wire.request").last).to_contain_text(
        "gRPC /lf.a2a.v1.A2AService/SendStreamingMessage"
    )
    expect(page.locator(".wire.event").filter(has_text="## Conclusion")).to_have_count(1)
    page.locator(".wire.request summary").last.click()  # opened, as in the docs' picture
    page.locator(".wire.event summary").last.click()
    screenshot(page, "inspect-wire")


def test_a_dropped_stream_resumes_and_a_task_is_cancelled(
    page: Any, inspector: Inspector, agent: str
) -> None:
    open_connected(page, inspector, agent)
    say(page, "count to 30")
    counted = page.locator(".artifact pre.text")
    expect(counted).to_contain_text("1")
    page.click("#detach")
    expect(page.locator(".dropped")).to_have_count(1)
    page.click("#resume")
    expect(counted).to_contain_text("3\n")
    page.click("#cancel")
    expect(page.locator("#task-state")).to_have_text("canceled")
    numbers = counted.inner_text().split()
    # no number lost or repeated across the drop
    assert numbers == [str(n) for n in range(1, len(numbers) + 1)]


def test_a_stream_dropped_until_its_task_ended_resumes_with_what_it_missed(
    page: Any, inspector: Inspector, agent: str
) -> None:
    open_connected(page, inspector, agent)
    say(page, "count to 2")
    counted = page.locator(".artifact pre.text")
    expect(counted).to_contain_text("1")
    page.click("#detach")
    expect(page.locator(".dropped")).to_have_count(1)
    page.wait_for_timeout(2500)  # the count likely ends meanwhile (either way, no gap)
    page.click("#resume")
    expect(page.locator("#task-state")).to_have_text("completed")
    expect(counted).to_have_text("1\n2\n")


def test_push_notifications_arrive_verified(page: Any, inspector: Inspector, agent: str) -> None:
    open_connected(page, inspector, agent)
    page.check("#push")
    say(page, "book a flight to Rome")
    expect(page.locator("#task-state")).to_have_text("input-required")
    say(page, "from Paris tomorrow")
    expect(page.locator("#messages")).to_contain_text("Please confirm consent")
    page.click("button[data-view=push-view]")
    asked = page.locator(".push").filter(has_text="input-required").first
    expect(asked).to_contain_text("signature verified")
    expect(page.locator(".push.refused")).to_have_count(0)
    screenshot(page, "inspect-push")


def test_the_agents_errors_are_shown_as_it_gave_them(
    page: Any, inspector: Inspector, guarded_agent: str
) -> None:
    page.goto(inspector.address(agent=guarded_agent))
    expect(page.locator("#credentials")).to_contain_text("API key (sent in header X-API-Key)")
    expect(page.locator("#connection-status")).to_contain_text("connected")
    say(page, "tell me a joke")
    error = page.locator(".bubble.error").last
    expect(error).to_contain_text(re.compile("Unauthenticated|Authentication"))
    expect(error).to_contain_text("X-API-Key")
    refused = page.locator(".wire.response").filter(has_text=re.compile(r"401 \(to #\d+\)"))
    expect(refused).to_have_count(1)
    screenshot(page, "inspect-error")
    page.fill("#credentials input[data-scheme=basic][data-part=user]", "tester")
    page.fill("#credentials input[data-scheme=basic][data-part=password]", PASSWORD)
    page.click("#apply")
    say(page, "tell me a joke")
    expect(page.locator("#task-state")).to_have_text("completed")
    expect(page.locator(".artifact")).to_contain_text("Why did the agent cross the network")


def test_a_file_artifact_is_downloadable(page: Any, inspector: Inspector, agent: str) -> None:
    open_connected(page, inspector, agent)
    notes = {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"two lines\nof notes\n"}
    page.set_input_files("#file", files=[notes])
    page.click("#send")
    link = page.locator(".artifact a.file")
    expect(link).to_contain_text("echo-notes.txt (19 bytes, text/plain)")
    with page.expect_download() as download:
        link.click()
    saved = download.value.path()
    with open(saved, "rb") as received:
        assert received.read() == notes["buffer"]
