"""Run the whole benchmark: every target, every scenario; print the table, save the JSON.

Each target is served by uvicorn (one worker, its default loop and HTTP parser: uvloop
and httptools) pinned to CPU 0; the load (wrk, or the SSE driver) is pinned to CPU 1.
Targets: the raw ASGI bound, parley's echo agent, and a2a-sdk 0.3.26's echo agent as
installed and with its tracing switched off. Scenarios: message/send at 1, 16 and 64
connections (wrk + lua/send.lua), 50 concurrent SSE streams of 10 chunks
(stream_driver.py), and memory per stored task after 20,000 tasks (in process).

    scripts/bench [--seconds 10] [--targets raw,parley,sdk,sdk-no-otel]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
PARLEY_PYTHON = ROOT / ".venv" / "bin" / "python"
SDK_PYTHON = ROOT / ".interop" / "venv" / "bin" / "python"
CONNECTIONS = (1, 16, 64)
SERVER_CPU, LOAD_CPU = "0", "1"


@dataclass
class Target:
    name: str
    python: Path
    app: str
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)


TARGETS = {
    "raw": Target("raw ASGI bound", PARLEY_PYTHON, "bench.raw_app:app", ROOT),
    "parley": Target("parley", PARLEY_PYTHON, "bench.parley_echo:app", ROOT),
    "sdk": Target("a2a-sdk 0.3.26", SDK_PYTHON, "sdk_echo:app", BENCH),
    "sdk-no-otel": Target(
        "a2a-sdk 0.3.26, tracing off",
        SDK_PYTHON,
        "sdk_echo:app",
        BENCH,
        {"OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "false"},
    ),
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def serving(target: Target) -> Iterator[str]:
    port = free_port()
    command = [
        "taskset", "-c", SERVER_CPU, str(target.python), "-m", "uvicorn", target.app,
        "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
        "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    env = {**os.environ, **target.env, "PYTHONPATH": str(target.cwd)}
    process = subprocess.Popen(command, cwd=target.cwd, env=env)
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_ready(process, url)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_ready(process: subprocess.Popen[bytes], url: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "messageId": "ready",
                "role": "user",
                "parts": [{"kind": "text", "text": "ready?"}],
            }
        },
    }
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            answer = httpx.post(url, json=body, timeout=5).json()
            if answer.get("result", {}).get("status", {}).get("state") == "completed":
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer message/send")


def wrk(url: str, connections: int, seconds: float) -> dict[str, Any]:
    command = [
        "taskset", "-c", LOAD_CPU, "wrk", "-t1", f"-c{connections}", f"-d{int(seconds)}s",
        "--timeout", "10s", "--latency", "-s", str(BENCH / "lua" / "send.lua"), url,
    ]  # fmt: skip
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    result: dict[str, Any] = {
        "connections": connections,
        "req_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),  # type: ignore[union-attr]
        "p50_ms": _latency(output, "50%"),
        "p99_ms": _latency(output, "99%"),
    }
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket_errors = re.search(r"Socket errors: (.*)", output)
    result["errors"] = (int(errors.group(1)) if errors else 0) + (
        sum(int(n) for n in re.findall(r"\d+", socket_errors.group(1))) if socket_errors else 0
    )
    return result


def _latency(output: str, percentile: str) -> float:
    match = re.search(rf"^\s+{re.escape(percentile)}\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
    if match is None:
        raise RuntimeError(f"wrk printed no {percentile} latency:\n{output}")
    value, unit = float(match.group(1)), match.group(2)
    return round(value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit], 3)


def stream_load(url: str, seconds: float) -> dict[str, Any]:
    command = [
        "taskset", "-c", LOAD_CPU, str(PARLEY_PYTHON), str(BENCH / "stream_driver.py"), url,
        "--streams", "50", "--seconds", str(seconds),
    ]  # fmt: skip
    output = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
    result: dict[str, Any] = json.loads(output.stdout)
    return result


def memory(key: str, tasks: int) -> dict[str, Any] | None:
    if key == "parley":
        command = [str(PARLEY_PYTHON), str(BENCH / "memory_parley.py"), "--tasks", str(tasks)]
        cwd, path = ROOT, ROOT
    elif key == "sdk":
        command = [str(SDK_PYTHON), str(BENCH / "memory_sdk.py"), "--tasks", str(tasks)]
        cwd, path = BENCH, BENCH
    else:
        return None
    env = {**os.environ, "PYTHONPATH": str(path)}
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=cwd, env=env)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def load_average() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()


def run(keys: list[str], seconds: float, tasks: int) -> dict[str, Any]:
    report: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "load_before": load_average(),
        "seconds_per_scenario": seconds,
        "targets": {},
    }
    for key in keys:
        target = TARGETS[key]
        print(f"-- {target.name}", file=sys.stderr, flush=True)
        results: dict[str, Any] = {"name": target.name}
        with serving(target) as url:
            wrk(url, 16, 2)  # warm-up
            results["send"] = [wrk(url, c, seconds) for c in CONNECTIONS]
            results["stream"] = stream_load(url, seconds)
        results["memory"] = memory(key, tasks)
        report["targets"][key] = results
    report["load_after"] = load_average()
    return report


def table(report: dict[str, Any]) -> str:
    targets = report["targets"]
    bound = targets.get("raw")
    lines = [
        f"{'target':30} {'scenario':14} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'ratio':>6}",
    ]
    for results in targets.values():
        for index, send in enumerate(results["send"]):
            ratio = ""
            if bound is not None:
                ratio = f"{send['req_per_s'] / bound['send'][index]['req_per_s']:.2f}"
            scenario = f"send c={send['connections']}"
            lines.append(
                f"{results['name']:30} {scenario:14} {send['req_per_s']:>9.0f} "
                f"{send['p50_ms']:>8.2f} {send['p99_ms']:>8.2f} {ratio:>6}"
                + (f"  errors={send['errors']}" if send["errors"] else "")
            )
        stream = results["stream"]
        ratio = f"{stream['events_per_s'] / bound['stream']['events_per_s']:.2f}" if bound else ""
        lines.append(
            f"{results['name']:30} {'stream ev/s':14} {stream['events_per_s']:>9.0f} "
            f"{stream['p50_ms']:>8.2f} {stream['p99_ms']:>8.2f} {ratio:>6}"
        )
        if results.get("memory"):
            lines.append(
                f"{results['name']:30} {'memory/task':14} "
                f"{results['memory']['bytes_per_task']:>9} bytes"
            )
    lines.append(f"load average before {report['load_before']}, after {report['load_after']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--targets", default=",".join(TARGETS))
    options = parser.parse_args()
    report = run(options.targets.split(","), options.seconds, options.tasks)
    results = BENCH / "results"
    results.mkdir(exist_ok=True)
    path = results / f"bench-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(report, indent=2))
    print(table(report))
    print(f"JSON: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
