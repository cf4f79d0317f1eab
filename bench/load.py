"""The load: wrk pinned to CPU 1, with ``lua/a2a.lua`` for message/send and for streams.

wrk is C and drives thousands of connections from one thread, so the load generator is
not what limits a target (the Python SSE driver of the first benchmark was: it made a
server look faster than the bound). For streams one wrk request is one whole SSE stream:
its latency is the whole-stream time, and the script checks that every stream ends with
its final status and counts its events.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from bench.targets import BENCH, LOAD_CPU, Served, cpu_seconds

SCRIPT = BENCH / "lua" / "a2a.lua"


def wrk(served: Served, connections: int, seconds: float, *, call: str = "send") -> dict[str, Any]:
    """One wrk run of ``call`` (send or stream) at ``connections``; the figures as a dict."""
    timeout = "30s" if call == "stream" else "10s"
    command = [
        "taskset", "-c", LOAD_CPU, "wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s",
        "--timeout", timeout, "-s", str(SCRIPT), served.url,
    ]  # fmt: skip
    env = {**os.environ, "BENCH_CALL": call, "BENCH_DIALECT": served.target.dialect}
    cpu_before = cpu_seconds(served.pid)
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=seconds + 120, check=False
    )
    cpu = cpu_seconds(served.pid) - cpu_before
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    raw: dict[str, Any] = json.loads(lines[-1])
    elapsed = raw["seconds"]
    result: dict[str, Any] = {
        "call": call,
        "connections": connections,
        "per_s": round(raw["requests"] / elapsed, 1),
        "p50_ms": raw["p50_us"] / 1000,
        "p99_ms": raw["p99_us"] / 1000,
        "max_ms": raw["max_us"] / 1000,
        "server_cpu": round(cpu / elapsed, 3),
        "errors": raw["socket_errors"] + raw["status_errors"] + raw["timeouts"],
    }
    if call == "stream":
        result["events_per_s"] = round(raw["events"] / elapsed, 1)
        result["events_per_stream"] = (
            round(raw["events"] / raw["streams"], 2) if raw["streams"] else 0
        )
        result["errors"] += raw["bad_streams"]
    return result
