"""The app's one action runner (inspector.tui.actions): a write action reports its own result, and
nothing it started keeps reporting afterwards."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from core.errors import StoreError
from core.index.reader import read_index
from core.manager import MemoryManager
from inspector.tui.actions import MAINTENANCE, MaintenanceFailed, maintain
from inspector.tui.widgets.activity_log import ActivityLog
from inspector.tui.widgets.hot_window import HotWindow
from tests.helpers.tui import SIZE, events_on_disk, press, settle, started, until
from tests.helpers.tui_fixtures import CONFIG


def _maintenance_lines(log: list[str]) -> list[str]:
    return [
        line for line in log if line.startswith("action: maintenance:") and "started" not in line
    ]


async def test_maintenance_compacts_logs_and_reports_its_own_pass_only(basic: Path) -> None:
    async with started(basic, size=SIZE) as (app, pilot):
        await press(pilot, "m")
        await until(pilot, lambda: app.status.chunk_count == 2)
        assert len(read_index(MemoryManager(basic, CONFIG).paths).entries) == 2
        log = app.query_one(ActivityLog).lines_written
        assert any("compaction chunk_0002" in line and "summarizer" in line for line in log)
        assert app.query_one(HotWindow).snapshot.length == len(events_on_disk(basic))
        await until(pilot, lambda: len(_maintenance_lines(log)) == 1)
        assert "compaction chunk_0002" in _maintenance_lines(log)[0]
        assert app.probe.actions_run.count("maintenance") == 1
        # A later pass the person did not ask for here (a runtime's commit requests one) is
        # not reported as this action (no callback is left on the manager).
        app.manager.request_maintenance()
        app.manager.wait_for_maintenance(timeout=30)
        await settle(app, pilot)
        assert len(_maintenance_lines(log)) == 1


def test_maintain_returns_the_pass_of_its_request(basic: Path) -> None:
    manager = MemoryManager(basic, CONFIG)
    result = maintain(manager)
    assert result is not None and result.compacted
    assert MAINTENANCE.describe(result, 12.0).startswith(f"compaction {result.chunk_id}")
    # Nothing to do now: the pass ran and says why it skipped.
    again = maintain(manager)
    assert again is not None and not again.compacted
    assert MAINTENANCE.describe(again, 3.0).startswith("pass skipped: ")
    reader = MemoryManager(basic, CONFIG, read_only=True)
    assert maintain(reader) is None  # read-only: no pass runs
    assert MAINTENANCE.describe(None, 1.0) == "no pass ran (1 ms)"


def test_maintain_reports_the_failure_of_the_pass_that_served_it(basic: Path) -> None:
    """The agent's pass is running when `m` asks; that pass succeeds, the coalesced pass that
    serves `m` fails: `m` reports the failure, not the agent's success."""
    manager = MemoryManager(basic, CONFIG)
    real_pass = manager._run_pass
    agent_pass_started, release_agent_pass = threading.Event(), threading.Event()
    calls: list[str] = []

    def scripted_pass(**kw: Any) -> Any:
        calls.append("pass")
        if len(calls) == 1:
            agent_pass_started.set()
            assert release_agent_pass.wait(30)
            return real_pass(**kw)
        raise StoreError("disk full while writing the chunk")

    manager._run_pass = scripted_pass  # type: ignore[method-assign]
    agent = manager.request_maintenance()
    assert agent_pass_started.wait(30)
    outcome: list[BaseException | object] = []

    def press_m() -> None:
        try:
            outcome.append(maintain(manager))
        except MaintenanceFailed as exc:
            outcome.append(exc)

    m_thread = threading.Thread(target=press_m)
    m_thread.start()
    while not manager._queued:  # `m`'s request is queued behind the running pass
        assert m_thread.is_alive()
    release_agent_pass.set()
    m_thread.join(30)
    first = agent.result(30)
    assert first is not None and first.compacted
    assert len(outcome) == 1 and isinstance(outcome[0], MaintenanceFailed)
    assert "disk full" in str(outcome[0])
    assert calls == ["pass", "pass"]
    with pytest.raises(StoreError):
        manager.request_maintenance().result(30)
