"""The cut preview planned in a child process (inspector.tui.plan_process): the same plan as in the
app's thread, kept up to date by sending only the appended events, started afresh after a
rewrite; a dead child is an error the app survives by planning in its thread; quitting ends it.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

import inspector.tui.reloader as app_module
from core.compaction.headroom import Headroom
from core.compaction.planner import plan_compaction
from core.manager import MemoryManager
from inspector.tui.app import InspectorApp
from inspector.tui.hot_window_model import HotWindowModel, HotWindowSnapshot
from inspector.tui.plan_process import PlanProcess, PlanProcessError
from inspector.tui.widgets.hot_window import HotWindow
from tests.helpers.tui import SIZE, settle, started
from tests.helpers.tui_fixtures import CONFIG, ev


def _local(snapshot: HotWindowSnapshot, headroom: Headroom | None = None) -> object:
    return plan_compaction(
        snapshot.event_list(), CONFIG, tokens=snapshot.token_list(), headroom=headroom
    )


def _events(root: Path) -> Path:
    return MemoryManager(root, CONFIG, read_only=True).paths.events


def test_the_child_plans_what_the_thread_plans_as_events_are_appended(basic: Path) -> None:
    model = HotWindowModel(_events(basic))
    planner = PlanProcess()
    try:
        first = model.poll().snapshot
        assert planner.plan(first, CONFIG) == _local(first)
        manager = MemoryManager(basic, CONFIG)
        manager.append_many(
            [ev(900 + i, "tool_call" if i % 2 else "user_input", f"more {i}") for i in range(40)]
        )
        manager.close()
        later = model.poll().snapshot
        assert later.n_events == first.n_events + 40
        assert planner.plan(later, CONFIG) == _local(later)
        # An older snapshot of the same rows plans its own events only.
        assert planner.plan(first, CONFIG) == _local(first)
    finally:
        planner.close()


def test_a_rewritten_file_is_planned_from_its_new_events(tmp_path: Path, basic: Path) -> None:
    path = _events(basic)
    model = HotWindowModel(path)
    planner = PlanProcess()
    try:
        before = model.poll().snapshot
        planner.plan(before, CONFIG)
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[len(lines) // 2 :]))
        after = model.poll().snapshot
        assert after.generation != before.generation
        assert planner.plan(after, CONFIG) == _local(after)
    finally:
        planner.close()


def test_a_dead_child_is_an_error_and_close_ends_the_child(basic: Path) -> None:
    snapshot = HotWindowModel(_events(basic)).poll().snapshot
    planner = PlanProcess()
    planner.plan(snapshot, CONFIG)
    pid = planner.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(PlanProcessError, match="planning process failed"):
        planner.plan(snapshot, CONFIG)
    assert planner.plan(snapshot, CONFIG) == _local(snapshot)  # a new child next time
    pid = planner.pid
    assert pid is not None
    planner.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: gone
    with pytest.raises(PlanProcessError, match="closed"):
        planner.plan(snapshot, CONFIG)


@contextlib.asynccontextmanager
async def planning_in_a_child(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[InspectorApp, Pilot[None], int]]:
    """The inspector on `root`, planning in its child from the first event: (app, pilot, the
    child's pid), once the first plan is on screen and equals the one made in the thread."""
    monkeypatch.setattr(app_module, "PLAN_PROCESS_MIN_EVENTS", 1)
    async with started(root, size=SIZE) as (app, pilot):
        process = app._plan_process
        assert process is not None and process.pid is not None
        assert app.preview is not None
        # the app plans with the session's headroom, as a pass does (contract §5)
        headroom = app._headroom(app.config)
        assert app.preview.plan == _local(app.query_one(HotWindow).snapshot, headroom)
        yield app, pilot, process.pid


async def test_the_app_plans_a_big_session_in_the_child_and_ends_it_on_quit(
    basic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with planning_in_a_child(basic, monkeypatch) as (_, pilot, pid):
        await pilot.press("q")
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


async def test_the_app_plans_in_its_thread_when_the_child_dies(
    basic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with planning_in_a_child(basic, monkeypatch) as (app, pilot, pid):
        os.kill(pid, signal.SIGKILL)
        app.preview = None
        app.request("plan")
        await settle(app, pilot)
        assert app._plan_process is None
        preview = app.preview
        assert preview is not None
        assert preview.plan == _local(app.query_one(HotWindow).snapshot, app._headroom(app.config))


def test_the_planning_child_runs_from_the_folder_of_our_packages() -> None:
    import core
    import inspector
    from inspector.tui.plan_process import package_root

    root = package_root()
    assert Path(core.__file__).resolve().parent == root / "core"
    assert Path(inspector.__file__).resolve().parent == root / "inspector"
