"""A deliberately broken agent fails exactly the checks it should, each with evidence
that shows the request and the answer at fault."""

from __future__ import annotations

from typing import Any

from parley import check
from parley.check import Status
from parley.demo import create_demo_app
from parley.server.push import PushSettings
from tests.check.broken import FAULTS, BrokenAgent


async def test_a_broken_agent_fails_the_checks_it_should() -> None:
    report = await check.run(app=BrokenAgent())
    failed = {r.check.id for r in report.results if r.status is Status.failed}
    assert failed == set(FAULTS), check.text(report)
    assert not report.ok
    passed = {r.check.id for r in report.results if r.status is Status.passed}
    assert {"card.served", "tasks.send", "tasks.get", "envelope.method-not-found"} <= passed


async def test_each_failure_carries_its_evidence() -> None:
    report = await check.run(app=BrokenAgent())
    by_id = {r.check.id: r for r in report.results if r.status is Status.failed}
    for result in by_id.values():
        assert result.reason, result.check.id
        assert result.evidence, result.check.id
        assert all(e.request and e.answer for e in result.evidence), result.check.id
    assert "HTTP 500" in by_id["envelope.parse-error"].evidence[-1].answer
    assert "-32602" in by_id["tasks.get-not-found"].reason
    assert "canceled" in by_id["tasks.cancel-ended"].evidence[-1].answer
    assert "InternalError" in by_id["push.not-declared"].reason
    history = by_id["tasks.history-length"]
    assert "3 messages" in history.reason
    assert "historyLength=1" in history.evidence[-1].request


async def test_only_and_skip_choose_by_id_and_area() -> None:
    report = await check.run(app=BrokenAgent(), only=["tasks"], skip=["tasks.history-length"])
    ids = {r.check.id for r in report.results}
    assert ids
    assert all(i.startswith("tasks.") for i in ids)
    assert "tasks.history-length" not in ids


async def test_a_check_that_gets_no_answer_in_time_fails() -> None:
    report = await check.run(app=BrokenAgent(slow=30), only=["tasks.get"], check_timeout=0.5)
    (result,) = report.results
    assert result.status is Status.failed
    assert result.reason == "no verdict within 0.5 s"
    assert result.seconds < 5


async def test_checks_the_run_had_no_time_for_are_skipped() -> None:
    report = await check.run(
        app=BrokenAgent(slow=30), only=["tasks"], check_timeout=20, overall_timeout=1
    )
    skipped = [r for r in report.results if r.status is Status.skipped]
    assert skipped
    assert all("time limit (1 s)" in r.reason for r in skipped)
    assert {r.check.id for r in skipped} >= {"tasks.get", "tasks.get-not-found"}


async def test_an_agent_that_never_notifies_fails_the_delivery_check() -> None:
    report = await check.run(
        app=BrokenAgent(push=True),
        only=["push.delivery"],
        receiver="127.0.0.1:0",
        check_timeout=2,
    )
    (result,) = report.results
    assert result.status is Status.failed
    assert result.reason.startswith("no notification reached http://127.0.0.1:")
    assert "send_message with a push config" in result.evidence[0].request


async def test_the_delivery_check_needs_a_receiver() -> None:
    report = await check.run(app=BrokenAgent(push=True), only=["push.delivery"])
    (result,) = report.results
    assert result.status is Status.skipped
    assert "--receiver" in result.reason


async def test_an_agent_that_declares_security_and_serves_everyone_fails() -> None:
    report = await check.run(app=BrokenAgent(secured=True), only=["card", "auth"])
    failed = {r.check.id: r.reason for r in report.results if r.status is Status.failed}
    expected = {"card.security-schemes", "card.signatures", "auth.required", "auth.challenge"}
    expected.add("card.no-extended-card")  # one of FAULTS
    assert set(failed) == expected, check.text(report)
    assert "'oauth'" in failed["card.security-schemes"]
    assert "signature" in failed["card.signatures"]
    assert failed["auth.required"] == "without credentials: HTTP 200, not 401"


class _NoContentDelete:
    """parley's demo agent, except that every DELETE answers 204 No Content, no body,
    whatever the agent answered."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "DELETE":
            await self.app(scope, receive, send)
            return

        async def no_content(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [(b"content-type", b"application/a2a+json")]
                await send({"type": "http.response.start", "status": 204, "headers": headers})
            elif not message.get("more_body"):
                await send({"type": "http.response.body", "body": b""})

        await self.app(scope, receive, no_content)


async def test_a_push_config_delete_without_a_json_body_fails_the_delete_check() -> None:
    app = create_demo_app(push=PushSettings(allow=["127.0.0.0/8"]))
    webhook = "http://127.0.0.1:9/a2a-check"
    async with app.lifespan():
        right = await check.run(app=app, only=["push.delete-answer"], webhook=webhook)
        wrong = await check.run(
            app=_NoContentDelete(app), only=["push.delete-answer"], webhook=webhook
        )
    assert [(r.binding, r.status) for r in right.results] == [("HTTP+JSON", Status.passed)]
    (result,) = wrong.results
    assert result.status is Status.failed, check.text(wrong)
    assert result.reason.startswith("the delete answered HTTP 204 with no JSON body")
    assert "DELETE" in result.evidence[-1].request
    assert "HTTP 204" in result.evidence[-1].answer
