"""The load: wrk pinned to CPU 1, with ``lua/a2a.lua`` for message/send and for streams.

wrk is C and drives thousands of connections from one thread, so the load generator is
not what limits a target (the Python SSE driver of the first benchmark was: it made a
server look faster than the bound). For streams one wrk request is one whole SSE stream:
its latency is the whole-stream time, and the script checks that every stream ends with
its final status and counts its events.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from typing import Any

from bench.targets import BENCH, LOAD_CPU, Served, cpu_seconds

SCRIPT = BENCH / "lua" / "a2a.lua"

OPEN_SECONDS = 0.3
"""How long the first request of each stream connection waits (``a2a.lua``'s ``delay``):
time for the server, idle until then, to accept every connection. uvloop accepts one
connection per turn of its event loop, so without the wait most of 500 connections
opened at once wait in the accept queue of a busy server, a turn each: seconds of p99
that are no stream's time, and a run with fewer streams in flight than it says."""


def wrk(
    served: Served,
    connections: int,
    seconds: float,
    *,
    call: str = "send",
    histogram: bool = False,
) -> dict[str, Any]:
    """One wrk run of ``call`` (send or stream) at ``connections``; the figures as a dict,
    with ``histogram`` also every latency recorded (``latency_us``: [microseconds, count]
    pairs, ascending), so that runs can be pooled (``pooled_p99_ms``).

    A target of several processes gets one wrk per process, all at once, each with its
    share of the connections (no load balancer in front, whose own cost would count):
    requests add up, p50 is the mean and p99 the worst of theirs."""
    timeout = "30s" if call == "stream" else "10s"
    opening = OPEN_SECONDS if call == "stream" else 0.0
    env = {
        **os.environ,
        "BENCH_CALL": call,
        "BENCH_DIALECT": served.target.dialect,
        "BENCH_OPEN_MS": str(round(opening * 1000)),
        "BENCH_HISTOGRAM": "1" if histogram else "0",
    }
    everyone = served.all
    shares = [
        connections // len(everyone) + (i < connections % len(everyone))
        for i in range(len(everyone))
    ]
    # With fewer connections than processes some get none (wrk refuses -c0).
    servers = [server for server, share in zip(everyone, shares, strict=True) if share]
    shares = [share for share in shares if share]
    cpu_before = sum(cpu_seconds(pid) for _, pid in servers)
    runs = [
        subprocess.Popen(
            [
                "taskset",
                "-c",
                LOAD_CPU,
                "wrk",
                "-t1",
                f"-c{share}",
                f"-d{max(1, round(seconds))}s",
                "--timeout",
                timeout,
                "-s",
                str(SCRIPT),
                url,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**env, "BENCH_CONNECTIONS": str(share)},
        )
        for (url, _), share in zip(servers, shares, strict=True)
    ]
    raws = [_result(run, seconds) for run in runs]
    cpu = sum(cpu_seconds(pid) for _, pid in servers) - cpu_before
    elapsed = max(raw["seconds"] for raw in raws) - opening
    total = {key: sum(raw[key] for raw in raws) for key in _SUMMED}
    result: dict[str, Any] = {
        "call": call,
        "connections": connections,
        "per_s": round(total["requests"] / elapsed, 1),
        "p50_ms": sum(raw["p50_us"] for raw in raws) / len(raws) / 1000,
        "p99_ms": max(raw["p99_us"] for raw in raws) / 1000,
        "max_ms": max(raw["max_us"] for raw in raws) / 1000,
        "server_cpu": round(cpu / elapsed, 3),
        "errors": total["socket_errors"] + total["status_errors"] + total["timeouts"],
    }
    if histogram:
        result["latency_us"] = _merged(raw.get("latency_us", []) for raw in raws)
    if call == "stream":
        result["events_per_s"] = round(total["events"] / elapsed, 1)
        streams = total["streams"]
        result["events_per_stream"] = round(total["events"] / streams, 2) if streams else 0
        result["errors"] += total["bad_streams"]
    return result


_SUMMED = (
    "requests", "socket_errors", "status_errors", "timeouts", "streams", "events", "bad_streams",
)  # fmt: skip


def _merged(histograms: Any) -> list[list[int]]:
    """Latency histograms ([microseconds, count] pairs) added up, ascending."""
    counts: dict[int, int] = {}
    for histogram in histograms:
        for value, count in histogram:
            counts[value] = counts.get(value, 0) + count
    return [[value, counts[value]] for value in sorted(counts)]


def pooled_p99_ms(runs: list[dict[str, Any]]) -> float:
    """The p99 of every request of ``runs`` (each run with its ``latency_us``), as if
    they were one run: the latency under which 99 % of them finished, as wrk's own
    percentile reads its histogram."""
    histogram = _merged(run["latency_us"] for run in runs)
    total = sum(count for _, count in histogram)
    if not total:
        return 0.0
    rank, seen = math.floor(0.99 * total + 1), 0  # wrk's rank: round(0.99 * total + 0.5)
    for value, count in histogram:
        seen += count
        if seen >= rank:
            return value / 1000
    return histogram[-1][0] / 1000


def _result(run: subprocess.Popen[str], seconds: float) -> dict[str, Any]:
    stdout, stderr = run.communicate(timeout=seconds + 120)
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if run.returncode != 0 or not lines:
        raise RuntimeError(f"wrk failed ({run.returncode}):\n{stdout}\n{stderr}")
    raw: dict[str, Any] = json.loads(lines[-1])
    return raw
