"""Run tests/mm_child.py (a MemoryManager in another process) to completion, optionally dying at a
fault point: the one spawner the crash, recovery and recall-index tests share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CHILD = Path(__file__).with_name("mm_child.py")


def run_mm_child(
    root: Path, config: dict[str, Any], *args: str, fault: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`mm_child.py ROOT CONFIG ARGS…` with SESSION_MEMORY_FAULT set to `fault` (or unset)."""
    env = dict(os.environ)
    env.pop("SESSION_MEMORY_FAULT", None)
    if fault:
        env["SESSION_MEMORY_FAULT"] = fault
    return subprocess.run(
        [sys.executable, str(CHILD), str(root), json.dumps(config), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
