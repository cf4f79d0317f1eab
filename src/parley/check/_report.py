"""A run's report for people (grouped by area, counts per level), for machines (JSON),
for CI (JUnit XML), and the list of checks as a Markdown table (docs/check.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from xml.etree import ElementTree

from parley.check._model import Check, Level, Result, Status
from parley.check._runner import Report

MARK = {Status.passed: "PASS", Status.failed: "FAIL", Status.skipped: "skip"}


def text(report: Report, *, verbose: bool = False) -> str:
    """The report as plain text: what was checked, then each area with its results
    (failures with their evidence; passes and skips only with ``verbose``), then counts."""
    lines = [f"Agent: {report.url}"]
    offered = ", ".join(f"{s.version} {s.binding}" for s in report.surfaces) or "nothing usable"
    lines.append(f"Offers: {offered}")
    if report.card_problem:
        lines.append(f"Card: {report.card_problem}")
    for area, results in _by_area(report.results).items():
        lines += ["", f"{area}  ({_area_counts(results)})"]
        for result in results:
            if result.status is Status.passed and not verbose:
                continue
            if result.status is Status.skipped and not verbose:
                continue
            lines.append(
                f"  {MARK[result.status]} {result.check.level.value:<6} "
                f"{result.check.id} [{result.where}]: {result.check.title}"
            )
            if result.reason:
                lines.append(f"       {result.reason}")
            if result.status is Status.failed:
                lines += _evidence(result)
    lines += ["", summary(report)]
    return "\n".join(lines)


def summary(report: Report) -> str:
    counts = report.counts()
    parts = [
        f"{level}: {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped"
        for level, c in counts.items()
        if sum(c.values())
    ]
    verdict = "conforms" if report.ok else "does not conform"
    return f"{'; '.join(parts)}. The agent {verdict}" + (
        " (SHOULD counted)." if report.strict else " (MUST counted)."
    )


def _evidence(result: Result) -> list[str]:
    lines = []
    for exchange in result.evidence[-3:]:
        lines.append("       > " + exchange.request.replace("\n", "\n         "))
        lines.append("       < " + exchange.answer.replace("\n", "\n         "))
    return lines


def _by_area(results: Iterable[Result]) -> dict[str, list[Result]]:
    areas: dict[str, list[Result]] = {}
    for result in results:
        areas.setdefault(result.check.area, []).append(result)
    return areas


def _area_counts(results: list[Result]) -> str:
    parts = []
    for level in Level:
        mine = [r for r in results if r.check.level is level]
        if mine:
            passed = sum(r.status is Status.passed for r in mine)
            failed = sum(r.status is Status.failed for r in mine)
            parts.append(
                f"{level.value} {passed}/{len(mine)} passed"
                + (f", {failed} failed" if failed else "")
            )
    return "; ".join(parts)


def as_json(report: Report) -> dict[str, Any]:
    return {
        "agent": report.url,
        "offers": [
            {"version": s.version, "binding": s.binding, "url": s.url} for s in report.surfaces
        ],
        "ok": report.ok,
        "strict": report.strict,
        "counts": report.counts(),
        "results": [
            {
                "id": r.check.id,
                "title": r.check.title,
                "area": r.check.area,
                "level": r.check.level.value,
                "section": r.check.section_for(r.version),
                "version": r.version,
                "binding": r.binding,
                "status": r.status.value,
                "reason": r.reason,
                "seconds": r.seconds,
                "evidence": [{"request": e.request, "answer": e.answer} for e in r.evidence]
                if r.status is Status.failed
                else [],
            }
            for r in report.results
        ],
    }


def junit(report: Report) -> bytes:
    """JUnit XML: one test suite per area, one test case per result."""
    suites = ElementTree.Element("testsuites", name="parley check")
    for area, results in _by_area(report.results).items():
        suite = ElementTree.SubElement(
            suites,
            "testsuite",
            name=area,
            tests=str(len(results)),
            failures=str(sum(r.status is Status.failed for r in results)),
            skipped=str(sum(r.status is Status.skipped for r in results)),
        )
        for r in results:
            case = ElementTree.SubElement(
                suite,
                "testcase",
                classname=f"{area}.{r.check.level.value}",
                name=f"{r.check.id} [{r.where}]",
                time=str(r.seconds),
            )
            if r.status is Status.failed:
                failure = ElementTree.SubElement(case, "failure", message=r.reason)
                failure.text = (
                    "\n".join(f"> {e.request}\n< {e.answer}" for e in r.evidence)
                    + f"\n({r.check.section_for(r.version)})"
                )
            elif r.status is Status.skipped:
                ElementTree.SubElement(case, "skipped", message=r.reason)
    return bytes(ElementTree.tostring(suites, encoding="utf-8", xml_declaration=True))


def listing(checks: Iterable[Check]) -> str:
    """The checks as plain text: id, level, sections, title."""
    return "\n".join(
        f"{c.id:<32} {c.level.value:<6} {c.section_for(None):<26} {c.title}" for c in checks
    )


def markdown(checks: Iterable[Check]) -> str:
    """The checks as the Markdown table of docs/check.md."""
    rows = [
        "| id | level | v0.3.0 | v1.0.1 | applies to | what it checks |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in checks:
        rows.append(
            f"| `{c.id}` | {c.level.value} | {_section(c, '0.3.0')} | {_section(c, '1.0.1')} "
            f"| {_applies(c)} | {c.title} |"
        )
    return "\n".join(rows) + "\n"


def _section(check: Check, spec: str) -> str:
    return f"§{check.sections[spec]}" if spec in check.sections else ""


def _applies(check: Check) -> str:
    needs = check.needs
    parts = [check.scope.value if check.scope.value != "surface" else "each binding"]
    if check.scope.value != "agent":
        parts.append("/".join(needs.versions))
    if check.scope.value == "surface" and len(needs.bindings) < 3:
        parts.append("/".join(needs.bindings))
    if needs.capability:
        negated = needs.capability.startswith("!")
        parts.append(("without " if negated else "") + needs.capability.lstrip("!"))
    if needs.security:
        parts.append("security declared")
    if needs.credentials:
        parts.append("credentials")
    return ", ".join(parts)


def dumps(report: Report) -> str:
    return json.dumps(as_json(report), indent=2)
