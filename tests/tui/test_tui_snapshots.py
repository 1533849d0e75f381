"""Snapshots (SVG) of the main views at 60x20, 80x24 (SSH) and 120x40, watchers off, fixed data.

The memory roots come from tests/helpers/tui_fixtures.py (fixed ids, timestamps and session
ids); the root is shown as "m", so no temporary path or clock reaches the screen. Regenerate with
`pytest tests/tui/test_tui_snapshots.py --snapshot-update` and look at the SVGs before committing.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from inspector.tui.widgets.hot_window import HotWindow
from tests.helpers.tui import make
from tests.helpers.tui_fixtures import (
    build_basic,
    build_hostile,
    build_split_first,
    build_with_archive,
)

pytestmark = pytest.mark.extended
"""A minute of SVG snapshots: CI runs them as their own step (`pytest -m extended`)."""

SIZES = [(60, 20), (80, 24), (120, 40)]


def _steps(keys: Sequence[str]) -> Callable[[Pilot[int]], Awaitable[None]]:
    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        deadline = time.monotonic() + 30
        while app.full_load_ms is None:  # the whole hot window loaded, not just its tail
            assert time.monotonic() < deadline, "events.jsonl never finished loading"
            await pilot.pause(0.02)
        # A focused input's cursor blinks on a timer: under load a frame could catch either
        # phase. Blinking is off before any field gets the focus, so its timer never runs
        # and the cursor is always drawn.
        for field in app.query(Input):
            field.cursor_blink = False
        for key in ("", *keys):
            if key:
                await pilot.press(key)
            for _ in range(4):
                await app.workers.wait_for_complete()
                await pilot.pause()
        # Let deferred scrolls and re-plans land: the screen is taken once nothing is running
        # and the list has not moved for several frames.
        hot = app.query_one(HotWindow)
        # The scrollbar thumb is drawn at sub-cell resolution from the scroll offset of the
        # moment; it is the one part of the screen that varies between runs, so it is hidden.
        hot.styles.scrollbar_size_vertical = 0
        for field in app.query(Input):  # any field mounted since (a form screen)
            field.cursor_blink = False
            field.refresh()
        # Focus scrolls the field into view after a refresh (animated): wait for it.
        await pilot.wait_for_scheduled_animations()
        last: object = None
        still = 0
        while still < 4:
            assert time.monotonic() < deadline, "the hot window never came to rest"
            busy = any(w.is_running for w in app.workers if w.group != "watch")
            now = (
                hot.scroll_y,
                hot.cursor,
                hot.virtual_size,
                id(hot.cut_preview),
                busy,
                app.focused,
                getattr(app.focused, "region", None),
                app.screen.scroll_offset,
            )
            still = still + 1 if now == last and not busy else 0
            last = now
            await pilot.pause(0.05)

    return run_before


VIEWS: dict[str, tuple[str, tuple[str, ...]]] = {
    "hot": ("basic", ()),
    "cut_preview": ("basic", ("p",)),
    "chunks": ("basic", ("2",)),
    "summary": ("basic", ("3",)),
    "prompt": ("basic", ("4",)),
    "archive_list": ("archive", ("6",)),
    "archived_session": ("archive", ("6", "enter")),
    "hostile": ("hostile", ("home",)),
    "split_turn": ("split", ("home", "down")),
    "help": ("basic", ("question_mark",)),
    "what_if": ("basic", ("w", "2", "0")),
    "archive_tab_no_archive": ("basic", ("6",)),
}

BUILDERS = {
    "basic": build_basic,
    "archive": build_with_archive,
    "hostile": build_hostile,
    "split": build_split_first,
}


CASES = [(v, s) for v in VIEWS for s in SIZES]


@pytest.mark.parametrize(("view", "size"), CASES, ids=[f"{v}-{s[0]}x{s[1]}" for v, s in CASES])
def test_view_snapshot(snap_compare: object, tmp_path: Path, view: str, size: tuple[int, int]):  # type: ignore[no-untyped-def]
    kind, keys = VIEWS[view]
    root = BUILDERS[kind](tmp_path / "m")
    assert snap_compare(make(root), terminal_size=size, run_before=_steps(keys))  # type: ignore[operator]
