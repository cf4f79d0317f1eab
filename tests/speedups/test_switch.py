"""The switch of ``parley._speedups``: off, every entry declines and the plain path gives
the same bytes; ``PARLEY_SPEEDUPS=0`` turns it off for a whole process."""

from __future__ import annotations

import os
import subprocess
import sys

from parley._speedups import encode_task
from parley.protocol.v1._protojson import event_json
from parley.types import A2AModel
from tests.speedups import plain
from tests.types.shapes import finished


def test_off_every_entry_declines_and_the_bytes_stay_the_same() -> None:
    task = finished("hello")
    fast = encode_task(task, "0.3"), event_json(task)
    assert fast[0] == A2AModel.to_json(task)
    assert encode_task(task, "1.0", '{"task":') == fast[1]
    with plain():
        assert encode_task(task, "0.3") is None
        assert encode_task(task, "1.0") is None
        assert event_json(task) == fast[1]
    assert encode_task(task, "0.3") == fast[0]


def test_the_environment_turns_it_off_for_a_process() -> None:
    probe = (
        "import parley.protocol\n"
        "from parley._speedups import enabled, encode_task\n"
        "from parley.types import TaskState\n"
        "print(enabled(), type(vars(TaskState).get('value')).__name__)\n"
    )
    for setting, expected in (("0", "False NoneType"), ("1", "True property")):
        out = subprocess.run(
            [sys.executable, "-c", probe],
            env={**os.environ, "PARLEY_SPEEDUPS": setting},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout.split()
        assert " ".join(out) == expected
