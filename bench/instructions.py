"""Instructions per request, counted by valgrind's callgrind: a figure machine load does
not move, for comparing a change with the one before it on a busy machine.

Runs ``profile_send.py`` under callgrind twice, with ``--requests N`` and ``N + delta``,
and divides the difference of the instruction counts by ``delta``, so start-up and
warm-up cancel out. A short run outside callgrind comes first: it writes the bytecode of
every module the counted runs import (in a fresh tree the first counted run would
compile them, and count Python's compiler: negative figures). Any other argument goes
to ``profile_send.py``.

    python bench/instructions.py [--delta 1000] [--target demo] [--db sqlite] [--stream]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def collected(requests: int, rest: list[str]) -> int:
    command = [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        sys.executable, str(BENCH / "profile_send.py"), "--requests", str(requests), *rest,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=1800)
    match = re.search(r"Collected : (\d+)", done.stderr)
    if match is None:
        raise RuntimeError(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(match.group(1))


def warm_up(rest: list[str]) -> None:
    """Run ``profile_send.py`` once outside callgrind, so every module's bytecode exists."""
    command = [sys.executable, str(BENCH / "profile_send.py"), "--requests", "20", *rest]
    subprocess.run(command, capture_output=True, check=True, timeout=600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=int, default=200)
    parser.add_argument("--delta", type=int, default=1_000)
    options, rest = parser.parse_known_args()
    warm_up(rest)
    low = collected(options.base, rest)
    high = collected(options.base + options.delta, rest)
    per_request = (high - low) / options.delta
    print(json.dumps({"arguments": rest, "instructions_per_request": round(per_request)}))


if __name__ == "__main__":
    main()
