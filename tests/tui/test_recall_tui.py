"""The TUI's Recall tab (issue 11): matched terms highlighted safely, a result opened in its
chunk with the matched event selected, archived sessions searched when asked."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Checkbox, DataTable, Static

from core.config import CompactionConfig
from core.manager import MemoryManager
from inspector.tui.views.recall_view import RecallView, chunk_text, highlight_terms
from tests.helpers.tui import cells, loaded, settle


def rendered(widget: Static) -> Text:
    content = widget.content  # the Text the view built (its spans, before Textual's styling)
    assert isinstance(content, Text)
    return content


def styled(text: Text, style: str) -> list[str]:
    return [text.plain[s.start : s.end] for s in text.spans if str(s.style) == style]


def test_highlight_marks_identifiers_and_never_parses_markup() -> None:
    text = Text("[@click=app.sentinel]x[/] ran scripts/apply_fix.py and [b]apply_fix[/b]")
    out = highlight_terms(text, "apply_fix.py")
    assert out.plain.startswith("[@click=app.sentinel]x[/]"), "event text stays text"
    marked = styled(out, "reverse")
    assert "apply_fix.py" in marked and "apply_fix" in marked


def test_chunk_text_selects_the_first_matched_event() -> None:
    events = [{"id": f"e{i}", "type": "tool_result", "content": f"line {i}"} for i in range(6)]
    text, line = chunk_text(events, {"e3", "e5"})
    assert line == 6  # two lines per event
    assert styled(text, "bold on dark_green")[0].startswith("   3 tool_result")
    assert any(s.startswith("   5 tool_result") for s in styled(text, "bold"))
    assert chunk_text(events, set())[1] == -1


def session(tmp_path: Path) -> MemoryManager:
    """One compacted chunk of 51 events, the 42nd the only mention of apply_fix.py."""
    config = CompactionConfig(
        count_compress_after_events=8, hot_window_events=3, keep_recent_tokens=100_000
    )
    mm = MemoryManager(tmp_path / "m", config)
    mm.append({"type": "user_input", "content": "explore the repository"})
    for n in range(40):
        mm.append({"type": "assistant_output", "content": f"step {n}: listed files"})
    mm.append({"type": "assistant_output", "content": "ran scripts/apply_fix.py --dry"})
    for n in range(40, 49):
        mm.append({"type": "assistant_output", "content": f"step {n}: more output"})
    for n in range(3):
        mm.append({"type": "user_input", "content": f"next task {n}"})
    assert mm.save(force=True).compacted
    return mm


async def test_open_a_result_shows_its_event_in_the_chunk(tmp_path: Path) -> None:
    mm = session(tmp_path)
    view = RecallView()
    async with loaded(view, mm, (100, 30)) as (app, pilot):
        view.search("apply_fix.py")
        await settle(app, pilot)
        table = view.query_one(DataTable)
        assert table.row_count >= 1
        events = rendered(view.query_one("#recall-events", Static))
        assert "apply_fix.py" in styled(events, "reverse")
        table.focus()
        await pilot.press("enter")
        await pilot.pause()
        opened = rendered(view.query_one("#recall-events", Static))
        chunk = mm.paths.chunk_file("chunk_0001").read_text().splitlines()
        assert f"chunk_0001: all {len(chunk)} events of the chunk" in opened.plain
        (selected,) = styled(opened, "bold on dark_green")
        assert "apply_fix.py" in selected
        assert app.focused is view.query_one("#recall-detail")
        assert view.query_one("#recall-detail").scroll_y > 0, "scrolled to the event"


async def test_all_sessions_checkbox_searches_archives(tmp_path: Path) -> None:
    mm = session(tmp_path)
    closed = mm.rotate().closed_session_id
    view = RecallView()
    async with loaded(view, mm, (100, 30)) as (app, pilot):
        view.search("apply_fix.py")
        await settle(app, pilot)
        assert view.query_one(DataTable).row_count == 0, "the default is the active session"
        view.query_one("#recall-all", Checkbox).value = True
        await settle(app, pilot)
        table = view.query_one(DataTable)
        assert table.row_count >= 1
        row = cells(table, 0)
        assert row[4] == closed
        table.focus()
        await pilot.press("enter")
        await pilot.pause()
        (selected,) = styled(
            rendered(view.query_one("#recall-events", Static)), "bold on dark_green"
        )
        assert "apply_fix.py" in selected


async def test_archived_results_say_so_and_leave_no_sqlite_sidecars(tmp_path: Path) -> None:
    """Issue 22 item 10: a result from a closed session reads `archived` as its source, an
    empty result says the hot window is not searched, and a recall over an archive leaves no
    -wal/-shm beside its recall index (the archive is read-only)."""
    mm = session(tmp_path)
    closed = mm.rotate().closed_session_id
    assert closed is not None
    archive = tmp_path / "m" / "session_archive" / closed
    before = sorted(p.name for p in archive.rglob("*"))
    view = RecallView()
    async with loaded(view, mm, (100, 30)) as (app, pilot):
        view.search("apply_fix.py")
        await settle(app, pilot)
        status = rendered(view.query_one("#recall-status", Static)).plain
        assert "0 results" in status and "hot window is not searched" in status, status
        view.query_one("#recall-all", Checkbox).value = True
        await settle(app, pilot)
        row = cells(view.query_one(DataTable), 0)
        assert row[0].strip() == "archived" and row[4] == closed, row
        summary = rendered(view.query_one("#recall-summary", Static)).plain
        assert summary.startswith(" archived "), summary
        sidecars = [p.name for p in archive.rglob("*") if p.name.endswith(("-wal", "-shm"))]
        assert sidecars == [], "while the TUI is open"
    assert sorted(p.name for p in archive.rglob("*")) == before
