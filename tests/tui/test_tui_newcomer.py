"""What a newcomer meets (issue 13): the footer while what-if has the keyboard, the Recall tab
taking typing at once, the memory root in the header at 80 columns, and the refusals and
states that must be said rather than left silent.

Workers are awaited (`settle`), never slept on.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import Input, TabbedContent

from inspector.tui.app import InspectorApp
from inspector.tui.screens import FocusPromptScreen, HelpScreen
from inspector.tui.widgets.activity_log import ActivityLog
from inspector.tui.widgets.footer import InspectorFooter
from inspector.tui.widgets.plan_panel import PlanPanel
from inspector.tui.widgets.status_header import (
    HeaderInfo,
    StatusHeader,
    header_line1,
    header_line2,
)
from inspector.tui.widgets.text_document import wrap_line
from tests.helpers.tui import (
    burst,
    footer_keys,
    make,
    press,
    screen_text,
    settle,
    started,
    text_in,
    widget_lines,
)
from tests.helpers.tui_fixtures import FIXED_SESSION

# The walk-through at three sizes, ~12 s: CI runs it in its extended step.
pytestmark = pytest.mark.extended

LONG_ROOT = "/home/someone/projects/device-agent/runs/2026-11-30/memory"


def footer_line(app: InspectorApp) -> str:
    """The footer's entries as drawn, left to right."""
    return " ".join(footer_keys(app))


@pytest.mark.parametrize("size", [(120, 40), (80, 24), (60, 20)])
async def test_what_if_shows_its_fields_and_their_keys(basic: Path, size: tuple[int, int]) -> None:
    """At every size: the three fields on screen (the hint gives way when small; the footer
    has the same keys), the footer's keys for them as entries of their own, none off screen."""
    app = make(basic)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await press(pilot, "w")
        focused = app.focused
        assert isinstance(focused, Input) and any(
            isinstance(a, PlanPanel) for a in focused.ancestors
        )
        text = screen_text(app)  # the look: on the screen, not scrolled out of the panel
        for label in ("keep_recent_tokens", "hot_window_events", "prompt tokens"):
            assert label in text, text
        footer = footer_line(app)
        for key in ("0-9 number", "↑↓ field", "tab next field", "esc back"):
            assert key in footer, footer
        keys = [w for w in app.query_one(InspectorFooter).children if w.region.area > 0]
        assert all(w.region.right <= size[0] for w in keys), "a footer entry runs off the screen"
        # The footer's entries, not text drawn over it: each is a widget of its own.
        entries = app.query_one(InspectorFooter).children
        shown = [str(getattr(w, "key_display", "")) for w in entries]
        assert shown[:4] == ["0-9", "↑↓", "tab", "esc"], shown
        right = [w.region.right for w in entries]
        lefts = [w.region.x for w in entries]
        assert all(r <= nxt for r, nxt in zip(right, lefts[1:], strict=False)), (lefts, right)
        # Moving between fields keeps them; the digits typed go into the field.
        await press(pilot, "down", "1", "2")
        assert app.query_one("#whatif-hot", Input).value == "12"
        assert "esc back" in footer_line(app)
        # Back on the list, the app's own keys return.
        await press(pilot, "escape")
        footer = footer_line(app)
        assert "q Quit" in footer and "esc back" not in footer, footer


async def test_recall_tab_types_letters_into_its_search_field(basic: Path) -> None:
    """`c` is the Compact key: typed on the Recall tab it must go into the search field."""
    async with started(basic, size=(80, 24)) as (app, pilot):
        await pilot.press("5")
        field = app.query_one("#recall-query", Input)
        # As tmux delivers a fast typist's keys: all at once, enter included (it searches).
        await burst(pilot, [*"crash", "enter"])
        await settle(app, pilot)
        assert app.focused is field and field.value == "crash"
        assert "compact" not in app.probe.actions_run
        assert not isinstance(app.screen, FocusPromptScreen)
        assert any("recall 'crash'" in line for line in app.query_one(ActivityLog).lines_written)
        # escape goes to the results, escape again back to the hot window.
        await press(pilot, "escape", "escape")
        assert app.query_one(TabbedContent).active == "hot"


async def test_recall_tab_keeps_the_global_keys_until_one_types(basic: Path) -> None:
    """Issue 22 item 5: after `5`, the keys `6`, `7`, `?` and `q` do what they do everywhere
    (they used to type into the search box); `/` puts the keyboard in the field."""
    async with started(basic, size=(80, 24)) as (app, pilot):
        tabs = app.query_one(TabbedContent)
        field = app.query_one("#recall-query", Input)
        for key, tab in (("6", "archive"), ("7", "activity")):
            await press(pilot, "5", key)
            assert tabs.active == tab and field.value == ""
        await press(pilot, "5", "question_mark")
        assert isinstance(app.screen, HelpScreen) and field.value == ""
        await press(pilot, "escape")
        await press(pilot, "slash", "6")
        assert tabs.active == "recall" and app.focused is field and field.value == "6"
        await press(pilot, "escape", "q")
        assert not app.is_running


async def test_recall_tab_reached_by_the_tab_key_gives_the_results_the_keyboard(
    basic: Path,
) -> None:
    async with started(basic, size=(120, 40)) as (app, pilot):
        await press(pilot, "4", "tab")
        assert app.query_one(TabbedContent).active == "recall"
        assert app.focused is app.query_one("#recall-table")


def test_header_keeps_the_roots_tail_and_as_much_as_fits() -> None:
    info = HeaderInfo(
        root=LONG_ROOT,
        session_id=FIXED_SESSION,
        context_window=128_000,
        event_count=38,
        follow=True,
    )
    for width in (80, 100, 120):
        line = header_line1(info, width).plain
        assert cell_len(line) <= width, line
        root = line.split("  session")[0].split(" │ session")[0].removeprefix("root ")
        # The middle is elided; the head and the tail stay, and the root takes what is left
        # once the separators and the window have made room (not 8 cells: "…/memory").
        assert root.endswith("11-30/memory") and root.startswith("/home/"), root
        assert cell_len(root) >= 20, root
        assert FIXED_SESSION in line, line
    wide = header_line1(info, 200).plain
    assert LONG_ROOT in wide and "window 128,000" in wide


def test_header_never_cuts_a_field_without_an_ellipsis() -> None:
    info = HeaderInfo(
        root=LONG_ROOT,
        session_id=FIXED_SESSION,
        model="gpt-4o-mini-2024-07-18",
        context_window=128_000,
        read_only=True,
        event_count=12_345,
        hot_tokens=99_000,
        last_prompt_tokens=100_000,
        chunk_count=12,
        pending_count=1,
        corrupt_lines=2,
        follow=True,
    )
    for width in (60, 80):
        line = header_line1(info, width)
        assert "…" in line.plain and "READ-ONLY" in line.plain
        assert line.overflow == "ellipsis" and line.no_wrap
        assert header_line2(info, width).overflow == "ellipsis"


async def test_header_at_80_columns_shows_the_roots_tail(basic: Path) -> None:
    app = make(basic)
    app.display_root = LONG_ROOT
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        first = widget_lines(app.query_one(StatusHeader))[0]
        assert "11-30/memory" in first and "/home/" in first, first
        assert "root …/memory" not in first
        assert FIXED_SESSION in first


async def test_write_keys_on_an_archived_session_say_why(tmp_path: Path) -> None:
    from tests.helpers.tui_fixtures import build_with_archive

    root = build_with_archive(tmp_path / "m")
    async with started(root, size=(120, 40)) as (app, pilot):
        await press(pilot, "6")
        await press(pilot, "enter")
        assert app.archive_id is not None
        await pilot.press("c")
        await pilot.pause()
        notes = [str(n.message) for n in app._notifications]
        assert any("archive" in n for n in notes), notes
        assert "compact" not in app.probe.actions_run


def test_header_counts_at_60_columns_keep_follow_whole() -> None:
    info = HeaderInfo(
        root="m",
        event_count=38,
        hot_tokens=1_235,
        last_prompt_tokens=1_683,
        chunk_count=1,
        watch_mode="watched",
        follow=True,
    )
    line = header_line2(info, 58).plain
    assert cell_len(line) <= 58 and line.endswith("watched follow"), line
    running = header_line2(replace(info, maintenance="running"), 58).plain
    assert "running" in running  # a running pass is never the part left out


def test_cjk_wraps_between_characters_not_at_the_blank_before_them() -> None:
    line = "  - 把今天产品周会的录音转成文字，整理成会议纪要，保存到备忘录。"
    rows = [line[a:b] for a, b in wrap_line(line, 20)]
    assert rows[0].startswith("  - 把今天"), rows
    assert "".join(rows) == line
    assert all(cell_len(row) <= 20 for row in rows)


async def test_what_if_placeholders_are_never_cut_off(basic: Path) -> None:
    """At 60 columns "8 (config)" does not fit its field: the number alone is shown."""
    async with started(basic, size=(60, 20)) as (app, pilot):
        await press(pilot, "p")  # the panel first, the fields after (they get a width later)
        await press(pilot, "w")
        for key in ("keep", "hot", "prompt"):
            field = app.query_one(f"#whatif-{key}", Input)
            assert cell_len(field.placeholder) < field.content_region.width, field.placeholder
        assert "(confi" not in text_in(app.query_one(PlanPanel))
    wide = make(basic)
    async with wide.run_test(size=(120, 40)) as pilot:
        await settle(wide, pilot)
        await pilot.press("w")
        await settle(wide, pilot)
        assert wide.query_one("#whatif-hot", Input).placeholder.endswith("(config)")
