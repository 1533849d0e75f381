"""`python -m bench --quick --json` in a child process, as the bench tests run it: one place
for its environment (no fault injection, the scale fixture at 50 chunks) and its time limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.helpers.paths import REPO

ROOT = REPO


def run_bench_quick(*args: str) -> dict[str, Any]:
    """The JSON document of `python -m bench --quick --json ARGS`; fails the test with the
    end of stderr when the run does not exit 0. The long-lived scale root takes minutes to
    build on a fresh machine, so the scale and TUI-scale keys are measured on 50 chunks."""
    env = dict(os.environ)
    env.pop("SESSION_MEMORY_FAULT", None)
    env["BENCH_SCALE_CHUNKS"] = "50"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", *args, "--quick", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc
