"""Snapshots (SVG) of the main views at 80x24 (SSH) and 120x40, watchers off, fixed data.

The memory roots come from tests/tui_fixtures.py (fixed ids, timestamps and session ids); the
root is shown as "m", so no temporary path or clock reaches the screen. Regenerate with
`pytest tests/test_tui_snapshots.py --snapshot-update` and look at the SVGs before committing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import pytest
from textual.pilot import Pilot

from inspector.app import InspectorApp, create_app
from tests.tui_fixtures import (
    CONFIG,
    build_basic,
    build_hostile,
    build_split_first,
    build_with_archive,
)

SIZES = [(80, 24), (120, 40)]


def _app(root: Path) -> InspectorApp:
    return create_app(root, config=CONFIG, watch=False, display_root="m", clock=lambda: "12:00:00")


def _steps(keys: Sequence[str]) -> Callable[[Pilot[int]], Awaitable[None]]:
    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        for key in ("", *keys):
            if key:
                await pilot.press(key)
            for _ in range(4):
                await app.workers.wait_for_complete()
                await pilot.pause()

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
}

BUILDERS = {
    "basic": build_basic,
    "archive": build_with_archive,
    "hostile": build_hostile,
    "split": build_split_first,
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", list(VIEWS))
def test_view_snapshot(snap_compare: object, tmp_path: Path, view: str, size: tuple[int, int]):  # type: ignore[no-untyped-def]
    kind, keys = VIEWS[view]
    root = BUILDERS[kind](tmp_path / "m")
    assert snap_compare(_app(root), terminal_size=size, run_before=_steps(keys))  # type: ignore[operator]
