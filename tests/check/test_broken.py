"""A deliberately broken agent fails exactly the checks it should, each with evidence
that shows the request and the answer at fault."""

from __future__ import annotations

from parley import check
from parley.check import Status
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
