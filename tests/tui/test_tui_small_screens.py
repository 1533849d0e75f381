"""Small screens (issue 22 item 11): below 100 columns a notification sits in the top corner
and never covers the hot window; on a short terminal the event detail gives its rows to the
hot window (80x24 shows more than 8 events); Activity lines wrap at the log's width, the
same at 60 columns as at 80 (they were cropped at 78 cells)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets._toast import Toast

from inspector.tui.widgets.activity_log import ActivityLog
from inspector.tui.widgets.hot_window import HotWindow
from tests.helpers.tui import make, press, settle, started, widget_lines
from tests.helpers.tui_fixtures import build_basic

# Whole-app Pilot runs of a few seconds each: the extended step (docs/TESTING.md).
pytestmark = pytest.mark.extended


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_a_notification_never_covers_the_hot_window(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make(build_basic(tmp_path / "m"))
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(app, pilot)
        app.notify(
            "a notification long enough to need a good part of the screen width, and then "
            "some more words, so that it takes three or four lines in its box",
            title="Compact",
            severity="warning",
        )
        await pilot.pause()
        await pilot.pause()
        toasts = [t for t in app.screen.query(Toast) if t.region.area]
        assert toasts
        hot = app.query_one(HotWindow).region
        for toast in toasts:
            assert not toast.region.overlaps(hot), (toast.region, hot)


async def test_80x24_shows_more_than_eight_events(tmp_path: Path) -> None:
    async with started(build_basic(tmp_path / "m"), size=(80, 24)) as (app, _pilot):
        hot = app.query_one(HotWindow)
        rows = [line for line in widget_lines(hot)[1:] if line.strip()]
        assert len(rows) >= 10, rows  # 9 with the detail pane at its old height


@pytest.mark.parametrize("width", [60, 80])
async def test_activity_lines_wrap_at_the_logs_width(tmp_path: Path, width: int) -> None:
    app = make(build_basic(tmp_path / "m"))
    words = [f"word{n:02d}" for n in range(30)]
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(app, pilot)
        await press(pilot, "7")
        log = app.query_one(ActivityLog)
        log.record(" ".join(words), "action")
        await settle(app, pilot)
        lines = widget_lines(log)
        assert all(len(line) <= log.size.width for line in lines)
        shown = " ".join(lines).split()
        assert all(word in shown for word in words), lines
        # A resize wraps what was written again, at the new width.
        await pilot.resize_terminal(width + 20, 24)
        await settle(app, pilot)
        shown = " ".join(widget_lines(log)).split()
        assert all(word in shown for word in words)
