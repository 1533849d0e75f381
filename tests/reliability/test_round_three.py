"""Issue 20, the hostile tester's third round: import, the command line and the TUI's plan
child (holes 3, 4, 5, 9, 10 and 12), each reproduced and what must happen instead.
docs/RELIABILITY.md ("Round three") lists them with these tests."""

from __future__ import annotations

import errno
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import BadInputError
from core.manager import MemoryManager
from tests.reliability._support import run_cli
from tests.tui_fixtures import CONFIG

# --- hole 3 and 12: the TUI's plan child ------------------------------------------------------


def _plan_once(root: Path) -> Any:
    """Start a PlanProcess, plan the session once in it; returns the (open) PlanProcess."""
    from inspector.model import HotWindowModel
    from inspector.plan_process import PlanProcess

    snapshot = HotWindowModel(MemoryManager(root, CONFIG, read_only=True).paths.events).poll()
    planner = PlanProcess()
    planner.plan(snapshot.snapshot, CONFIG)
    return planner


def test_hole_3_the_plan_child_never_imports_code_from_the_working_directory(
    basic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `core/` (or `inspector/`) package in the user's folder is neither imported nor run by
    the planning child the TUI starts for big sessions."""
    work = tmp_path / "work"
    marker = tmp_path / "planted-code-ran"
    for package in ("core", "inspector"):
        (work / package).mkdir(parents=True)
        (work / package / "__init__.py").write_text(
            f"open({str(marker)!r}, 'a').write({package!r})\n", encoding="utf-8"
        )
    monkeypatch.chdir(work)
    from inspector.plan_process import PlanProcessError

    failure = None
    try:
        _plan_once(basic).close()  # a plan that comes back was made by our own package
    except PlanProcessError as exc:
        failure = exc
    assert not marker.exists(), f"the plan child ran {marker.read_text()}/__init__.py from cwd"
    assert failure is None, failure


def _state(pid: int) -> str | None:
    """The process's state letter from /proc (Z: a zombie); None once it is gone (reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def test_hole_12_a_killed_plan_child_is_reaped_when_it_dies(basic: Path) -> None:
    planner = _plan_once(basic)
    try:
        pid = planner.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10.0
        while _state(pid) is not None and time.monotonic() < deadline:
            time.sleep(0.02)  # polling for an outcome with a deadline, not a sleep-as-sync
        assert _state(pid) is None, f"the killed plan child {pid} is left a zombie"
    finally:
        planner.close()
