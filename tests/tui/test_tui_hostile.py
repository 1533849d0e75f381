"""The hostile-input corpus: whatever is in the files, the inspector shows it literally, runs
nothing, sends no escape to the terminal, and does not crash."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from core.manager import MemoryManager
from inspector.tui.app import InspectorApp
from inspector.tui.widgets.event_detail import EventDetail
from inspector.tui.widgets.hot_window import HotWindow
from inspector.tui.widgets.status_header import StatusHeader
from tests.helpers.tui import SIZE, press, settle, started, text_in, widget_text
from tests.helpers.tui_fixtures import CONFIG, HOSTILE_CHUNK_IDS, MARKUP, build_basic

# Whole-app Pilot runs of a few seconds each: the extended step (docs/TESTING.md).
pytestmark = pytest.mark.extended


def row_of(app: InspectorApp, pred: object) -> int:
    hot = app.query_one(HotWindow)
    for row in hot.snapshot.rows[: hot.snapshot.length]:
        if pred(row):  # type: ignore[operator]
            return row.index
    raise AssertionError("row not found")


async def test_markup_in_events_is_literal_and_clicking_runs_nothing(hostile: Path) -> None:
    async with started(hostile, size=SIZE) as (app, pilot):
        hot = app.query_one(HotWindow)
        hot.follow = False
        await press(pilot, "home")
        text = text_in(app.screen)  # the row previews and the detail of the row at the cursor
        assert "[@click=app.quit]click me[/]" in text
        assert "[bold red]not bold[/]" in text
        # Click the row's preview, then the detail panel where the full text is shown.
        region = hot.content_region
        for x in (region.x + region.width - 20, region.x + region.width - 5):
            await pilot.click(offset=(x, region.y + 1))
            await pilot.pause()
        detail = app.query_one(EventDetail)
        body = detail.query_one("#detail-body")
        assert "[@click=app.quit]click me[/]" in str(body.render())
        for dy in range(0, min(8, body.region.height)):
            await pilot.click(offset=(body.region.x + 3, body.region.y + dy))
            await pilot.pause()
        await settle(app, pilot)
        assert app.is_running and app.return_code is None
        assert app.probe.actions_run == []
        assert hot.cursor == 0


async def test_ansi_and_control_characters_are_visible_never_raw(hostile: Path) -> None:
    async with started(hostile, size=SIZE) as (app, pilot):
        hot = app.query_one(HotWindow)
        hot.follow = False
        hot.cursor = row_of(app, lambda r: r.event_id == "ev_0001")
        await settle(app, pilot)
        assert "red:␛[31mRED␛[0m title:␛]0;pwn" in widget_text(hot)
        row = hot.snapshot.rows[hot.cursor]
        assert "bell:␇" in row.preview and "nul:␀" in row.preview and "<U+202E>" in row.preview
        for y in range(hot.size.height):
            strip = hot.render_line(y)
            assert (
                "\x1b" not in strip.text and "\x07" not in strip.text and "\x00" not in strip.text
            )
        body = str(app.query_one(EventDetail).query_one("#detail-body").render())
        assert "\x1b" not in body and "\x07" not in body and "\\u001b[31mRED" in body


async def test_hostile_type_role_id_and_ts_fields_are_literal(hostile: Path) -> None:
    async with started(hostile, size=(160, 40)) as (app, pilot):
        hot = app.query_one(HotWindow)
        hot.follow = False
        hot.cursor = row_of(app, lambda r: r.event_id == "[@click=app.quit]id[/]")
        await settle(app, pilot)
        body = str(app.query_one(EventDetail).query_one("#detail-body").render())
        assert "[@click=app.quit]id[/]" in body and "[red]not a time[/red]" in body


async def test_five_megabyte_event_loads_with_capped_preview_and_detail(hostile: Path) -> None:
    async with started(hostile, size=SIZE) as (app, pilot):
        index = row_of(app, lambda r: r.event_id == "ev_0003")
        row = app.query_one(HotWindow).snapshot.rows[index]
        assert len(row.preview) <= 160 and row.tokens > 1_000_000
        hot = app.query_one(HotWindow)
        hot.follow = False
        hot.cursor = index
        await settle(app, pilot)
        body = str(app.query_one(EventDetail).query_one("#detail-body").render())
        assert "more chars]" in body and len(body) < 100_000


async def test_invalid_utf8_and_garbage_lines_are_corrupt_rows(hostile: Path) -> None:
    async with started(hostile, size=SIZE) as (app, pilot):
        hot = app.query_one(HotWindow)
        corrupt = [r for r in hot.snapshot.rows[: hot.snapshot.length] if r.corrupt]
        assert len(corrupt) == 2
        assert app.query_one(StatusHeader).info.corrupt_lines == 2
        hot.follow = False
        hot.cursor = corrupt[1].index
        await settle(app, pilot)
        assert "this is not json [@click=app.quit]q[/]" in text_in(app.query_one(EventDetail))
        assert app.is_running


async def test_truncated_last_line_waits_until_complete(hostile: Path) -> None:
    async with started(hostile, size=SIZE) as (app, pilot):
        hot = app.query_one(HotWindow)
        ids = [r.event_id for r in hot.snapshot.rows[: hot.snapshot.length]]
        assert "ev_trunc" not in ids
        n = hot.snapshot.length
        with (hostile / "session" / "events.jsonl").open("ab") as fh:
            fh.write(b'ne"}\n')
        app.reload_all()
        await settle(app, pilot)
        assert hot.snapshot.length == n + 1
        assert hot.snapshot.rows[n].event_id == "ev_trunc"
        assert hot.snapshot.rows[n].preview == "half a line"


async def test_file_rewritten_shorter_reloads(tmp_path: Path) -> None:
    root = build_basic(tmp_path / "m")
    async with started(root, size=SIZE) as (app, pilot):
        hot = app.query_one(HotWindow)
        assert hot.snapshot.length == 23
        events = root / "session" / "events.jsonl"
        lines = events.read_bytes().splitlines(keepends=True)
        events.write_bytes(b"".join(lines[:4]))
        app.reload_all()
        await settle(app, pilot)
        assert hot.snapshot.length == 4
        assert hot.cursor == 3
        assert app.query_one(StatusHeader).info.event_count == 4


async def test_chunks_folder_deleted_and_empty_summary(tmp_path: Path) -> None:
    root = build_basic(tmp_path / "m")
    shutil.rmtree(root / "session" / "chunks")
    (root / "session" / "summary.md").write_text("", encoding="utf-8")
    async with started(root, size=SIZE) as (app, pilot):
        assert app.query_one(StatusHeader).info.chunk_count == 0
        for key in "23451":
            await press(pilot, key)
        assert app.is_running
        await press(pilot, "p")
        assert app.preview is not None


async def test_hostile_chunk_ids_in_index_are_literal_and_open_nothing(hostile: Path) -> None:
    async with started(hostile, size=SIZE) as (app, pilot):
        await press(pilot, "2")
        view = app.query_one("#chunks-view")
        table = view.query_one("DataTable")
        table.focus()
        for _ in range(len(HOSTILE_CHUNK_IDS) + 1):
            await press(pilot, "down")
        await press(pilot, "3")
        await press(pilot, "4")
        assert app.is_running and app.probe.actions_run == []
        assert "\x1b" not in text_in(app.screen)  # what every widget draws, as text


async def test_hostile_summary_and_error_text_in_notifications(hostile: Path) -> None:
    (hostile / "session" / "summary.md").write_text(
        "# Session History (compressed chunks)\n\n## Rolling Summary\n\n" + MARKUP + "\n",
        encoding="utf-8",
    )
    async with started(hostile, size=SIZE) as (app, pilot):
        app.show_error("test", MARKUP + " \x1b[2J")
        await pilot.pause()
        await press(pilot, "3")
        assert app.is_running
        assert "[@click=app.quit]click me[/]" in app.probe.errors_shown[-1]
        assert "\x1b" not in app.probe.errors_shown[-1]


async def test_memory_root_that_does_not_exist_yet(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    async with started(root, watch=True, size=SIZE) as (app, pilot):
        assert app.query_one(HotWindow).snapshot.length == 0
        text = text_in(app.screen)
        assert "empty" in text or "no events" in text
        MemoryManager(root, CONFIG).append({"type": "user_input", "content": "first"})
        for _ in range(200):
            if app.query_one(HotWindow).snapshot.length == 1:
                break
            await pilot.pause(0.05)
        assert app.query_one(HotWindow).snapshot.length == 1
    assert not os.path.exists(tmp_path / "fresh" / "session" / "corrupt.jsonl")


async def test_unreadable_state_json_is_reported_once_not_in_a_loop(tmp_path: Path) -> None:
    root = build_basic(tmp_path / "m")
    (root / "session" / "state.json").write_text("{ not json [@click=app.quit]x[/]", "utf-8")
    async with started(root, size=SIZE) as (app, pilot):
        app.reload_all()
        await settle(app, pilot)
        app.reload_all()
        await settle(app, pilot)
        errors = [e for e in app.probe.errors_shown if e.startswith("status:")]
        assert len(errors) == 1, app.probe.errors_shown
        assert app.query_one(HotWindow).snapshot.length == 23
        assert app.is_running and app.probe.actions_run == []
