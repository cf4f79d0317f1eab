"""Where a served send on SQLite spends its time, measured from inside the server: wall
clocks on a shared machine are noisy, but the phases of the slowest sends say what the
tail is made of.

Serves ``bench.parley_echo:echo`` with ``parley serve`` on a fresh SQLite file (server on
CPU 0, wrk on CPU 1, as ``scripts/bench`` runs them), with ``send_phases_probe`` loaded
into it, and loads it with wrk at 16 connections for a warm-up, then at
``--connections``. Prints wrk's figures, then for the sends of the measured run the
server-side time (request read -> last body sent), p50 and p99, and each phase of it:

- ``read->app``: the request read, until the app starts on it;
- ``app->submit``: the app's work until its first write is queued for the group writer
  (the agent's run included);
- ``submit->flush``: until the flush that commits it starts;
- ``flush``: the flush that commits it (its wall time: every write of the batch);
- ``flush->sent``: the commit answered, until the response's last body is sent;

each as p50 / p99 of all sends and the mean over the slowest 1 %. Then the flushes:
writes per flush, wall and loop-thread CPU, gaps between flushes, the flushes over 2 ms
of wall and how many of them had over 1 ms of CPU (the rest: the loop thread off the
CPU), their context switches, and the WAL file's size.

    python bench/send_phases.py [--connections 64] [--seconds 5] [--tree DIR] [--json FILE]

``--tree`` serves another checkout (a ``git archive`` copy) with this one's interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.load import SCRIPT  # noqa: E402
from bench.targets import LOAD_CPU, PARLEY_PYTHON, SERVER_CPU, free_port, wait_ready  # noqa: E402

PROBE = ROOT / "bench" / "send_phases_probe"
_PHASES = ("read->app", "app->submit", "submit->flush", "flush", "flush->sent")


def _quantile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _wrk(url: str, connections: int, seconds: int) -> dict[str, Any]:
    command = ["taskset", "-c", LOAD_CPU, "wrk", "-t1", f"-c{connections}"]
    command += [f"-d{seconds}s", "--timeout", "10s", "-s", str(SCRIPT), url]
    env = {**os.environ, "BENCH_CALL": "send", "BENCH_CONNECTIONS": str(connections)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def serve_and_load(
    tree: Path, connections: int, seconds: int, out: str
) -> tuple[dict[str, Any], float]:
    """Serve ``tree``'s parley with the probe and load it; wrk's figures of the
    measured run and when it started (the probe's records in ``out`` once the server
    stopped)."""
    with tempfile.TemporaryDirectory(prefix="parley-phases-") as folder:
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        env = {**os.environ, "SEND_PHASES_OUT": out, "PYTHONHASHSEED": "0"}
        env["PYTHONPATH"] = os.pathsep.join([str(tree / "src"), str(tree), str(PROBE)])
        main = "import sys; from parley.cli import main; sys.argv[0] = 'parley'; main()"
        command = [str(PARLEY_PYTHON), "-c", main, "serve", "bench.parley_echo:echo"]
        command += ["--port", str(port), "--log-level", "warning"]
        server = subprocess.Popen(
            ["taskset", "-c", SERVER_CPU, *command],
            cwd=folder,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        try:
            wait_ready(server, url, "0.3")
            _wrk(url, 16, 2)
            start = time.perf_counter()
            measured = _wrk(url, connections, seconds)
        finally:
            server.terminate()
            server.wait(15)
    return measured, start


def _measured(records: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """The sends and flushes of the measured run: from its start on (``perf_counter``
    is the system's monotonic clock on Linux, the same in both processes)."""
    start = records["measured_from"]
    sends = [send for send in records["sends"] if send[0] >= start]
    return sends, [flush for flush in records["flushes"] if flush[0] >= start]


def report(records: dict[str, Any]) -> dict[str, Any]:
    """The phases of the sends and the flushes, as described at the top."""
    sends, flushes = _measured(records)
    sends = [send for send in sends if send[2] and send[3]]
    total = [(send[5] - send[0]) * 1e3 for send in sends]
    cut = _quantile(total, 0.99)
    slowest = [send for send, time in zip(sends, total, strict=True) if time >= cut]
    found: dict[str, Any] = {
        "sends": len(sends),
        "server_ms": {"p50": _quantile(total, 0.5), "p99": cut, "max": max(total)},
    }
    for index, name in enumerate(_PHASES):
        times = [(send[index + 1] - send[index]) * 1e3 for send in sends]
        worst = [(send[index + 1] - send[index]) * 1e3 for send in slowest]
        found[name] = {
            "p50": _quantile(times, 0.5),
            "p99": _quantile(times, 0.99),
            "slowest_1%_mean": statistics.mean(worst),
        }
    wall = [(flush[1] - flush[0]) * 1e3 for flush in flushes]
    long = [flush for flush, time in zip(flushes, wall, strict=True) if time > 2]
    gaps = [(flushes[i + 1][0] - flushes[i][1]) * 1e3 for i in range(len(flushes) - 1)]
    found["flushes"] = {
        "n": len(flushes),
        "writes_p50": _quantile([flush[2] for flush in flushes], 0.5),
        "writes_max": max(flush[2] for flush in flushes),
        "wall_ms_p50_p99": [_quantile(wall, 0.5), _quantile(wall, 0.99)],
        "cpu_ms_p50_p99": [_quantile([f[3] * 1e3 for f in flushes], q) for q in (0.5, 0.99)],
        "gap_ms_p50_p99": [_quantile(gaps, 0.5), _quantile(gaps, 0.99)],
        "over_2ms_wall": len(long),
        "of_them_over_1ms_cpu": sum(1 for flush in long if flush[3] > 0.001),
        "their_switches_voluntary_involuntary": [sum(f[5] for f in long), sum(f[6] for f in long)],
        "wal_mb_max": max(flush[4] for flush in flushes) / 1e6,
    }
    return found


def _print(wrk: dict[str, Any], found: dict[str, Any]) -> None:
    print(f"wrk: {wrk['requests']} sends, p50 {wrk['p50_us'] / 1e3:.2f} ms, "
          f"p99 {wrk['p99_us'] / 1e3:.2f} ms")  # fmt: skip
    server = found["server_ms"]
    print(f"server-side ({found['sends']} sends): p50 {server['p50']:.2f} ms, "
          f"p99 {server['p99']:.2f}, max {server['max']:.2f}")  # fmt: skip
    for name in _PHASES:
        phase = found[name]
        print(f"  {name:14} p50 {phase['p50']:6.2f}  p99 {phase['p99']:6.2f}  "
              f"slowest 1 % mean {phase['slowest_1%_mean']:6.2f} ms")  # fmt: skip
    print("flushes:", json.dumps(_rounded(found["flushes"])))


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument("--json", help="write the probe's records to this file too")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = options.json or os.path.join(folder, "phases.json")
        tree = options.tree.resolve()
        wrk, start = serve_and_load(tree, options.connections, options.seconds, out)
        with open(out) as file:
            records = json.load(file)
        records["measured_from"] = start
        if options.json:
            with open(out, "w") as file:
                json.dump(records, file)
        found = report(records)
    _print(wrk, found)


if __name__ == "__main__":
    main()
