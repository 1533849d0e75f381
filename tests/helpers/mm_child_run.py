"""Run tests/helpers/mm_child.py (a MemoryManager in another process) to completion, optionally
dying at a fault point, or start it and leave it running: the one spawner the crash, recovery,
concurrency, soak and recall-index tests share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.paths import MM_CHILD


def _command(root: Path, config: dict[str, Any], args: tuple[str, ...]) -> list[str]:
    return [sys.executable, str(MM_CHILD), str(root), json.dumps(config), *args]


def _env(fault: str | None) -> dict[str, str]:
    """This process's environment with SESSION_MEMORY_FAULT set to `fault` (or unset): a fault
    left in the parent's environment must never reach a child that should not die."""
    env = dict(os.environ)
    env.pop("SESSION_MEMORY_FAULT", None)
    if fault:
        env["SESSION_MEMORY_FAULT"] = fault
    return env


def run_mm_child(
    root: Path, config: dict[str, Any], *args: str, fault: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`mm_child.py ROOT CONFIG ARGS…` with SESSION_MEMORY_FAULT set to `fault` (or unset)."""
    return subprocess.run(
        _command(root, config, args), capture_output=True, text=True, env=_env(fault), timeout=120
    )


def spawn_mm_child(root: Path, config: dict[str, Any], *args: str) -> subprocess.Popen[str]:
    """`mm_child.py ROOT CONFIG ARGS…` started and left running (no fault point), its output
    piped, for tests that run several processes on one root at once."""
    return subprocess.Popen(
        _command(root, config, args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(None),
    )
