"""Run the benchmark; print the table, save the JSON to ``bench/results/``.

Each target is served on CPU 0 (``targets.py``); wrk loads it from CPU 1 (``load.py``).
Scenarios per target: ``message/send`` at 1, 16 and 64 connections (after a 2 s warm-up
at 16), whole SSE streams of 10 chunks at 50 and 500 concurrent streams, and for the
in-memory targets the memory per stored task (in process). Ratios are to the raw bound's
figure of the same scenario in the same run: requests (or whole streams) per second,
and p99 as a multiple of the bound's.

    scripts/bench                                        # every target (about 10 minutes)
    scripts/bench --seconds 2 --targets raw,parley       # smoke
    scripts/bench --mode million [--tasks 1000000]       # the million-task cost (long)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.load import wrk
from bench.targets import (
    BENCH,
    DEFAULT_POSTGRES,
    PARLEY_PYTHON,
    PENDING,
    ROOT,
    TARGETS,
    Target,
    serving,
    wal_state,
)

SEND_CONNECTIONS = (1, 16, 64)
STREAMS = (50, 500)


def memory(target: Target, tasks: int) -> dict[str, Any] | None:
    """Memory per stored task, for the in-memory echo targets (parley's and the SDK's)."""
    if target.key == "parley":
        python, script, folder = PARLEY_PYTHON, "memory_parley.py", ROOT
    elif target.key == "sdk":
        from bench.venvs import sdk03_python

        python, script, folder = sdk03_python(), "memory_sdk.py", BENCH
    else:
        return None
    env = {**os.environ, "PYTHONPATH": str(folder)}
    command = [str(python), str(BENCH / script), "--tasks", str(tasks)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=folder, env=env)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def measure(target: Target, options: argparse.Namespace, *, tasks: bool = True) -> dict[str, Any]:
    results: dict[str, Any] = {"name": target.name, "scenarios": []}
    with serving(target, options.postgres) as served:
        wrk(served, 16, 2)  # warm-up
        runs = [(connections, "send") for connections in options.connections]
        if target.streams:
            runs += [(streams, "stream") for streams in options.streams]
        for connections, call in runs:
            before = wal_state(options.postgres) if target.db == "postgres" else None
            scenario = wrk(served, connections, options.seconds, call=call)
            if before is not None:  # what PostgreSQL's log did meanwhile (``WalState``)
                scenario.update(wal_state(options.postgres).since(before))
                requests = scenario["per_s"] * options.seconds
                scenario["wal_bytes_per_request"] = round(scenario["wal_bytes"] / max(requests, 1))
            results["scenarios"].append(scenario)
    if tasks and options.tasks:
        results["memory"] = memory(target, options.tasks)
    return results


def load_average() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def compare(options: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {
        "mode": "compare",
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "load_before": load_average(),
        "seconds_per_scenario": options.seconds,
        "targets": {},
        "not_measured": {},
    }
    report["not_measured"] = {key: PENDING[key] for key in options.targets if key in PENDING}
    keys = [key for key in options.targets if key not in PENDING]
    rounds: list[dict[str, Any]] = []
    for number in range(options.rounds):
        measured: dict[str, Any] = {}
        for key in keys:
            target = TARGETS[key]
            print(f"-- {target.name}{_round_label(number, options)}", file=sys.stderr, flush=True)
            measured[key] = measure(target, options, tasks=number == 0)
        rounds.append(measured)
    report["targets"] = rounds[0]
    if options.rounds > 1:
        report["rounds"] = rounds
    report["load_after"] = load_average()
    return report


def _round_label(number: int, options: argparse.Namespace) -> str:
    return f" (round {number + 1} of {options.rounds})" if options.rounds > 1 else ""


def machine() -> str:
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    python = "CPython " + ".".join(map(str, sys.version_info[:3]))  # parley's and the raw bound's
    return f"{os.cpu_count()} CPUs, {model}; {python}"


def _scenario(s: dict[str, Any]) -> str:
    return f"send c={s['connections']}" if s["call"] == "send" else f"stream x{s['connections']}"


def table(report: dict[str, Any]) -> str:
    """The comparison as a fixed-width table, ratios to the bound of the same scenario."""
    bound = {_scenario(s): s for s in report["targets"].get("raw", {}).get("scenarios", [])}
    lines = [
        f"{'target':30} {'scenario':13} {'per s':>9} {'events/s':>9} {'p50 ms':>8} "
        f"{'p99 ms':>8} {'ratio':>6} {'p99 x':>6} {'cpu':>5}"
    ]
    for results in report["targets"].values():
        for s in results["scenarios"]:
            name = _scenario(s)
            base = bound.get(name)
            ratio = f"{s['per_s'] / base['per_s']:.2f}" if base else ""
            p99 = f"{s['p99_ms'] / base['p99_ms']:.2f}" if base and base["p99_ms"] else ""
            events = f"{s['events_per_s']:>9.0f}" if "events_per_s" in s else f"{'':>9}"
            lines.append(
                f"{results['name']:30} {name:13} {s['per_s']:>9.0f} {events} "
                f"{s['p50_ms']:>8.2f} {s['p99_ms']:>8.2f} {ratio:>6} {p99:>6} "
                f"{s['server_cpu']:>5.0%}"
                + (f"  errors={s['errors']}" if s["errors"] else "")
                + _wal_note(s)
            )
        if results.get("memory"):
            lines.append(
                f"{results['name']:30} {'memory/task':13} "
                f"{results['memory']['bytes_per_task']:>9} bytes"
            )
    for key, why in report.get("not_measured", {}).items():
        lines.append(f"not measured ({key}): {why}")
    lines.append(
        f"{report['machine']}; load average before {report['load_before']}, "
        f"after {report['load_after']}"
    )
    return "\n".join(lines)


def rounds_table(report: dict[str, Any]) -> str:
    """For a run of several rounds: each scenario's ratio to the bound of its own round,
    round by round, and their median (with the median requests a second). A target's
    rounds alternate with the bound's, so a bound that drifts during the run moves both."""
    rounds: list[dict[str, Any]] = report["rounds"]
    bounds = [
        {_scenario(s): s for s in measured.get("raw", {}).get("scenarios", [])}
        for measured in rounds
    ]
    heads = " ".join(f"{f'r{n + 1}':>5}" for n in range(len(rounds)))
    lines = [f"{'target':30} {'scenario':13} {'median/s':>9} {heads} {'median':>6} {'p99 x':>6}"]
    for key, first in rounds[0].items():
        for index, scenario in enumerate(first["scenarios"]):
            name = _scenario(scenario)
            runs = [
                (measured[key]["scenarios"][index], bound.get(name))
                for measured, bound in zip(rounds, bounds, strict=True)
            ]
            ratios = [s["per_s"] / base["per_s"] for s, base in runs if base]
            tails = [s["p99_ms"] / base["p99_ms"] for s, base in runs if base and base["p99_ms"]]
            per_s = statistics.median(s["per_s"] for s, _ in runs)
            cells = " ".join(f"{r:>5.2f}" for r in ratios) if ratios else f"{'':>5}"
            median = f"{statistics.median(ratios):>6.2f}" if ratios else f"{'':>6}"
            tail = f"{statistics.median(tails):>6.2f}" if tails else f"{'':>6}"
            lines.append(f"{first['name']:30} {name:13} {per_s:>9.0f} {cells} {median} {tail}")
    return "\n".join(lines)


def _wal_note(s: dict[str, Any]) -> str:
    """For a PostgreSQL target: the log segments PostgreSQL created during the scenario
    (each stalls every commit for the 16 MB it writes and syncs: a run on a server that
    has not recycled enough segments yet measures that), and the log written per
    request (by the whole server: other clients' writes count too)."""
    if "wal_segments_new" not in s:
        return ""
    checkpoint = f", {s['checkpoints']} checkpoint(s)" if s["checkpoints"] else ""
    return (
        f"  wal: {s['wal_segments_new']} new segments{checkpoint}, "
        f"{s['wal_bytes_per_request']:,} B/request"
    )


def _numbers(text: str) -> tuple[int, ...]:
    """Comma-separated counts; 0 (or nothing) leaves the scenario out."""
    return tuple(int(n) for n in text.split(",") if n and int(n) > 0)


def options_from(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("compare", "million"), default="compare")
    parser.add_argument("--seconds", type=float, default=10, help="per scenario")
    parser.add_argument(
        "--targets",
        default=",".join(TARGETS),
        help=f"comma-separated, of: {', '.join([*TARGETS, *PENDING])}",
    )
    parser.add_argument(
        "--connections", type=_numbers, default=SEND_CONNECTIONS, help="0: no send scenario"
    )
    parser.add_argument("--streams", type=_numbers, default=STREAMS, help="0: no streams")
    parser.add_argument(
        "--tasks",
        type=int,
        default=None,
        help="compare: tasks for memory per task (20,000; 0 skips); million: tasks stored",
    )
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="server to make databases on")
    parser.add_argument("--stores", default="sqlite,postgres", help="million: stores to fill")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="compare: measure every target this many times, in turn, and add a table of "
        "each round's ratios and their median (the first round's full table is printed too)",
    )
    options = parser.parse_args(argv)
    options.targets = [key for key in options.targets.split(",") if key]
    unknown = [key for key in options.targets if key not in TARGETS and key not in PENDING]
    if unknown:
        parser.error(f"unknown targets: {', '.join(unknown)}")
    if options.rounds < 1:
        parser.error("--rounds must be at least 1")
    if options.tasks is None:
        options.tasks = 1_000_000 if options.mode == "million" else 20_000
    return options


def main() -> None:
    options = options_from()
    if options.mode == "million":
        from bench.million import million, million_table

        report = million(options)
        text = million_table(report)
    else:
        report = compare(options)
        text = table(report)
        if "rounds" in report:
            text = f"round 1 of {options.rounds}:\n{text}\n\nevery round:\n{rounds_table(report)}"
    results = BENCH / "results"
    results.mkdir(exist_ok=True)
    path = results / f"bench-{options.mode}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(report, indent=2))
    print(text)
    print(f"JSON: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
