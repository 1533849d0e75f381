"""Reading the inspector (issue 22 item 12): an event's content as text above its JSON, `End`
on the Chunks table goes to the newest chunk, an `S` row opens its chunk, the `runs`
sparkline starts fresh after a rotation, and a first launch says `?` is the legend."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, TabbedContent

from core.manager import MemoryManager
from inspector.tui.first_launch import HINT, first_launch
from inspector.tui.views.chunks_view import ChunksView
from inspector.tui.widgets.event_detail import EventDetail
from inspector.tui.widgets.hot_window import HotWindow
from tests.helpers.tui import SIZE, make, press, settle, started, text_in
from tests.helpers.tui_fixtures import CONFIG, build_basic, build_split_first

# Whole-app Pilot runs of a few seconds each: the extended step (docs/TESTING.md).
pytestmark = pytest.mark.extended


async def test_event_detail_shows_content_as_text_above_the_json(tmp_path: Path) -> None:
    root = build_basic(tmp_path / "m")
    manager = MemoryManager(root, CONFIG)
    manager.append({"type": "assistant_output", "content": "first line\nsecond line"})
    async with started(root, size=SIZE) as (app, pilot):
        hot = app.query_one(HotWindow)
        hot.cursor = hot.snapshot.length - 1
        await settle(app, pilot)
        shown = text_in(app.query_one(EventDetail))
        assert "first line\nsecond line" in shown, shown
        assert shown.index("second line") < shown.index('"content": "first line\\nsecond line"')


async def test_end_on_the_chunks_table_goes_to_the_newest_chunk(tmp_path: Path) -> None:
    root = build_basic(tmp_path / "m")
    manager = MemoryManager(root, CONFIG)
    for _ in range(3):
        manager.append({"type": "user_input", "content": "more"})
        manager.append({"type": "assistant_output", "content": "done"})
        assert manager.save(force=True).compacted
    async with started(root, size=SIZE) as (app, pilot):
        await press(pilot, "2")
        table = app.query_one("#chunks-table", DataTable)
        assert table.row_count == 4 and table.cursor_row == 0
        table.focus()
        await press(pilot, "end")
        assert table.cursor_row == 3
        assert app.query_one(ChunksView).selected_chunk_id == "chunk_0004"
        await pilot.press("home")
        assert table.cursor_row == 0


async def test_enter_on_a_synthetic_row_opens_its_chunk(tmp_path: Path) -> None:
    root = build_split_first(tmp_path / "m")
    async with started(root, size=SIZE) as (app, pilot):
        hot = app.query_one(HotWindow)
        (row,) = [r for r in hot.snapshot.rows if r.synthetic]
        hot.cursor = row.index
        await settle(app, pilot)
        assert "made by chunk chunk_0001" in text_in(app.query_one(EventDetail))
        hot.focus()
        await press(pilot, "enter")
        assert app.query_one(TabbedContent).active == "chunks"
        assert app.query_one(ChunksView).selected_chunk_id == "chunk_0001"


async def test_runs_start_fresh_after_a_rotation(tmp_path: Path) -> None:
    root = build_basic(tmp_path / "m")
    async with started(root, size=SIZE) as (app, pilot):
        assert app.prompt_history, "the session's recorded prompt is a run"
        manager = MemoryManager(root, CONFIG)
        manager.rotate()
        app.request("status")
        await settle(app, pilot)
        assert app.status.session_id != "s-20260101T100000Z-f1x3d0"
        assert app.prompt_history == []


def test_first_launch_hint_shows_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSION_INSPECTOR_STATE", str(tmp_path / "state"))
    assert first_launch() is True
    assert first_launch() is False
    assert "?" in HINT and "legend" in HINT


async def test_first_launch_hint_is_a_notification(tmp_path: Path) -> None:
    root = build_basic(tmp_path / "m")
    app = make(root)
    app.first_launch_hint = True
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert any(HINT in n.message for n in app._notifications)
