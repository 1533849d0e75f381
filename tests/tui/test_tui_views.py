"""Pilot tests of the inspector's views and modal screens: what they show, what they return,
and that hostile text is shown literally without ever running an action."""

from __future__ import annotations

import asyncio
import itertools
import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest
from textual.app import App
from textual.binding import BindingType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Input, Select, Static, TextArea
from textual.widgets.data_table import ColumnKey

from core.compaction.prompt import estimate_message_tokens
from core.compaction.summaries import render_summary, summary_md_bound
from core.config import CompactionConfig
from core.events import make_event, new_event_id
from core.index.catalog import write_index
from core.index.chunk_files import write_chunk_file
from core.index.format import ChunkEntry
from core.index.pending import list_pending, write_pending
from core.manager import MemoryManager
from core.recall.ranking import RecallHit, RecallResult
from core.status import ArchiveInfo
from core.store.atomic import atomic_write_text
from core.tokens import estimate_tokens
from inspector.tui.screens import AppendEventScreen, ConfirmScreen, FocusPromptScreen
from inspector.tui.views.archive_view import ArchiveView
from inspector.tui.views.chunks_view import ChunksView
from inspector.tui.views.prompt_view import PromptView
from inspector.tui.views.recall_view import RecallView
from inspector.tui.views.summary_view import SummaryView
from inspector.tui.widgets.text_document import TextDocument
from tests.helpers.tui import ViewHost, cells, loaded, press, settle, static_text

# Each view hosted and driven by Pilot, ~30 s in all: the extended step (docs/TESTING.md).
pytestmark = pytest.mark.extended

HOSTILE = [
    "[@click=app.quit]x[/]",
    "[link=file:///etc/passwd]x[/link]",
    "[b unbalanced",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;title\x07",
    "abc\u202edef",
]


class ScreenHost(ViewHost):
    """Pushes one modal screen and records what it dismissed with."""

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self._screen = screen
        self.results: list[Any] = []

    def on_mount(self) -> None:
        self.push_screen(self._screen, self.results.append)


class RecordingHost(ViewHost):
    """Mounts one view and keeps the messages it posts to the app."""

    def __init__(self, view: Widget) -> None:
        super().__init__(view)
        self.posted: list[Any] = []

    def on_prompt_view_built(self, message: PromptView.Built) -> None:
        self.posted.append(message)

    def on_recall_view_searched(self, message: RecallView.Searched) -> None:
        self.posted.append(message)

    def on_archive_view_open_archive(self, message: ArchiveView.OpenArchive) -> None:
        self.posted.append(message)

    def on_chunks_view_chunk_highlighted(self, message: ChunksView.ChunkHighlighted) -> None:
        self.posted.append(message)

    def of(self, kind: type[Any]) -> list[Any]:
        return [m for m in self.posted if isinstance(m, kind)]


SPLIT_SUMMARY = (
    "history: the user asked about logs\n\n---\n\nTurn Context (split turn):\n"
    "prefix: the assistant started grepping"
)
HOSTILE_TEXT = " ".join([*HOSTILE, "[@click=app.sentinel]run[/]"])


def ev(etype: str, content: Any, **extra: Any) -> dict[str, Any]:
    event = make_event(etype, content, **extra)
    event["id"] = new_event_id()
    event["ts"] = "2026-11-29T17:45:43.120Z"
    return event


@pytest.fixture
def memory(tmp_path: Path) -> MemoryManager:
    """A memory root written through core: a hot window, two indexed chunks (the second a
    split turn with hostile text), pending evidence and summary files."""
    config = CompactionConfig(summary_max_chunks=1, max_rolling_summary_lines=5)
    manager = MemoryManager(tmp_path / "memory", config)
    manager.store.ensure_session()
    manager.store.append_events(
        [ev("user_input", "root task"), ev("assistant_output", "working on it")]
    )
    first = [ev("user_input", "find the logs"), ev("assistant_output", "found /var/log")]
    second = [
        ev("user_input", HOSTILE_TEXT),
        ev("tool_call", None, name="grep", tool_call_id="c1", arguments={"q": "x"}),
        ev("tool_result", "x" * 5000, name="grep", tool_call_id="c1"),
    ]
    entries = [
        ChunkEntry(
            "chunk_0001",
            "2026-11-29T17:00:00Z",
            2,
            first[0]["id"],
            first[-1]["id"],
            "the user asked for logs",
            None,
            {"summary_backend": "extractive"},
        ),
        ChunkEntry(
            "chunk_0002",
            "2026-11-29T17:30:00Z",
            3,
            second[0]["id"],
            second[-1]["id"],
            SPLIT_SUMMARY + " " + HOSTILE_TEXT,
            {
                "first_kept_event_id": "ev_k",
                "tokens_before": 1234,
                "is_split_turn": True,
                "turn_start_event_id": second[0]["id"],
            },
            {"summary_backend": "openai"},
        ),
    ]
    with manager.store.lock():
        write_chunk_file(manager.paths, "chunk_0001", first)
        write_chunk_file(manager.paths, "chunk_0002", second)
        write_index(manager.paths, entries)
        write_pending(
            manager.paths,
            "pending-20261129T180000000000Z-abcdef",
            [ev("user_input", "pending question")],
            {"summary": "pending summary"},
        )
    rendered = render_summary(
        [(e.chunk_id, e.summary) for e in entries],
        summary_max_chunks=1,
        max_rolling_summary_lines=5,
    )
    atomic_write_text(manager.paths.summary, rendered.summary_md)
    atomic_write_text(manager.paths.summary_archive, rendered.archive_md)
    return manager


# --- ConfirmScreen -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"), [("y", True), ("enter", True), ("n", False), ("escape", False)]
)
async def test_confirm_keys(key: str, expected: bool) -> None:
    app = ScreenHost(ConfirmScreen("Rotate session", "moves M/session"))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
        assert app.results == [expected]


async def test_confirm_tab_to_cancel_then_enter_cancels() -> None:
    app = ScreenHost(ConfirmScreen("Repair", "rebuild the index"))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("tab", "enter")
        await pilot.pause()
        assert app.results == [False]


async def test_confirm_shows_hostile_text_literally() -> None:
    message = " ".join(HOSTILE) + " [@click=app.sentinel]run[/]"
    app = ScreenHost(ConfirmScreen("[@click=app.sentinel]T[/]", message))
    async with app.run_test() as pilot:
        await pilot.pause()
        shown = static_text(app.screen.query_one("#confirm-message", Static))
        assert "[@click=app.quit]x[/]" in shown
        assert "[link=file:///etc/passwd]x[/link]" in shown
        assert "[b unbalanced" in shown
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
        assert "␛[31mred" in shown
        title = static_text(app.screen.query_one("#confirm-title", Static))
        assert title == "[@click=app.sentinel]T[/]"
        await pilot.click("#confirm-message")
        await pilot.click("#confirm-title")
        await pilot.pause()
        assert app.sentinel_calls == 0
        assert app.is_running
        assert app.results == []


# --- FocusPromptScreen ---------------------------------------------------------------------


async def test_focus_prompt_returns_text() -> None:
    app = ScreenHost(FocusPromptScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press(*"keep paths")
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == ["keep paths"]


async def test_focus_prompt_empty_and_cancel() -> None:
    app = ScreenHost(FocusPromptScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == [""]
    app = ScreenHost(FocusPromptScreen(default="x"))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]


# --- AppendEventScreen ---------------------------------------------------------------------


async def test_append_form_default_user_input() -> None:
    app = ScreenHost(AppendEventScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.focused, TextArea)
        await pilot.press(*"hello", "enter", *"world")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.results == [{"type": "user_input", "role": "user", "content": "hello\nworld"}]


async def test_append_form_type_changes_role_and_name_submits_on_enter() -> None:
    app = ScreenHost(AppendEventScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#append-type", Select).value = "tool_result"
        await pilot.pause()
        assert screen.query_one("#append-role", Input).value == "tool"
        await pilot.press(*"done")
        screen.query_one("#append-name", Input).focus()
        await pilot.press(*"screenshot", "enter")
        await pilot.pause()
        assert app.results == [
            {"type": "tool_result", "role": "tool", "content": "done", "name": "screenshot"}
        ]


async def test_append_form_custom_type_and_edited_role_kept() -> None:
    app = ScreenHost(AppendEventScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        screen = app.screen
        role = screen.query_one("#append-role", Input)
        role.value = "narrator"
        screen.query_one("#append-custom", Input).focus()
        await pilot.press(*"note")
        await pilot.pause()
        assert role.value == "narrator"
        await pilot.press("enter")
        await pilot.pause()
        assert app.results == [{"type": "note", "role": "narrator", "content": ""}]


async def test_append_form_blank_role_uses_default_and_escape_cancels() -> None:
    app = ScreenHost(AppendEventScreen(initial_type="system_event"))
    async with app.run_test() as pilot:
        await pilot.pause()
        app.screen.query_one("#append-role", Input).value = ""
        await pilot.press(*HOSTILE[0], "ctrl+s")
        await pilot.pause()
        assert app.results == [{"type": "system_event", "role": "system", "content": HOSTILE[0]}]
    app = ScreenHost(AppendEventScreen())
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press(*"draft", "escape")
        await pilot.pause()
        assert app.results == [None]


# --- ChunksView ----------------------------------------------------------------------------


async def test_chunks_view_reload_shows_index_and_pending(memory: MemoryManager) -> None:
    view = ChunksView()
    async with loaded(view, memory, (120, 24)):  # wide: every column shown
        table = view.query_one(DataTable)
        assert table.row_count == 3
        row0, row1, row2 = cells(table, 0), cells(table, 1), cells(table, 2)
        assert row0[:3] == ["chunk_0001", "active", "2"]
        assert row0[6] == "extractive"
        assert row1[:3] == ["chunk_0002", "active", "3"]
        assert row1[3] == "split" and row1[6] == "openai"
        assert row1[4] == "1,234→?"  # prompt before → after (kept not recorded)
        assert row1[5] == "from ev_k"  # cut_meta in words, not JSON
        assert row2[1] == "pending" and row2[0].startswith("pending-2026")
        assert row2[2] == "1"
        # First row selected: summary at once, events read by the worker.
        assert "the user asked for logs" in static_text(view.query_one("#chunks-summary", Static))
        events = static_text(view.query_one("#chunks-events", Static))
        assert "find the logs" in events and "found /var/log" in events


async def test_chunks_view_split_turn_marked_and_hostile_text_literal(
    memory: MemoryManager,
) -> None:
    view = ChunksView()
    async with loaded(view, memory) as (app, pilot):
        table = view.query_one(DataTable)
        table.focus()
        await press(pilot, "down")
        assert view.selected_chunk_id == "chunk_0002"
        summary = static_text(view.query_one("#chunks-summary", Static))
        assert "history: the user asked about logs" in summary
        assert "split turn: turn context" in summary
        assert "│ prefix: the assistant started grepping" in summary
        assert "Turn Context (split turn):" not in summary  # replaced by the visible marker
        for literal in (
            "[@click=app.quit]x[/]",
            "[link=file:///etc/passwd]x[/link]",
            "[b unbalanced",
            "␛[31mred",
            "␛]0;title␇",
            "<U+202E>",
        ):
            assert literal in summary
        assert "\x1b" not in summary and "\u202e" not in summary
        events = static_text(view.query_one("#chunks-events", Static))
        assert "[@click=app.sentinel]run[/]" in events and "grep" in events
        assert "\x1b" not in events
        # Clicking everywhere on the detail and the table runs no action.
        for selector in ("#chunks-summary", "#chunks-events", "#chunks-table"):
            view.query_one(selector).scroll_visible(animate=False, immediate=True)
            await pilot.pause()
            for x in range(0, 70, 7):
                await pilot.click(selector, offset=(x, 1))
        await pilot.pause()
        assert app.sentinel_calls == 0 and app.is_running
        # Enter moves to the detail pane, escape goes back.
        table.focus()
        await pilot.press("enter")
        assert app.focused is view.query_one("#chunks-detail")
        await pilot.press("escape")
        assert app.focused is table


async def test_chunks_view_shows_what_each_summary_kept(tmp_path: Path) -> None:
    """Per chunk: prompt tokens before → after, the summary's compression, the runs and their
    requests, the paths edited, and the said/used identifiers the summary dropped."""
    manager = MemoryManager(tmp_path / "memory", CompactionConfig())
    manager.store.ensure_session()
    events = [
        ev("user_input", "fix the crash in parse_config"),
        ev(
            "tool_call",
            None,
            role="assistant",
            name="edit",
            tool_call_id="e1",
            arguments={"path": "src/app/config_loader.py", "old": "a", "new": "b"},
        ),
        ev("tool_result", "edited", role="tool", name="edit", tool_call_id="e1"),
        ev("assistant_output", "Fixed parse_config; see RetryPolicy", role="assistant"),
        ev("user_input", "now update docs/USAGE.md"),
        ev(
            "tool_call",
            None,
            role="assistant",
            name="write",
            tool_call_id="w1",
            arguments={"path": "docs/USAGE.md", "content": "usage"},
        ),
        ev("tool_result", "written", role="tool", name="write", tool_call_id="w1"),
    ]
    summary = "Request: fix the crash in parse_config · edited: src/app/config_loader.py"
    entry = ChunkEntry(
        "chunk_0001",
        "2026-11-29T17:00:00Z",
        len(events),
        events[0]["id"],
        events[-1]["id"],
        summary,
        {"first_kept_event_id": "ev_k", "tokens_before": 5000, "kept_tokens_estimate": 1000},
        {"summary_backend": "extractive"},
    )
    with manager.store.lock():
        write_chunk_file(manager.paths, "chunk_0001", events)
        write_index(manager.paths, [entry])
    view = ChunksView()
    async with loaded(view, manager, (100, 40)):
        after = 1000 + estimate_tokens(summary)
        assert cells(view.query_one(DataTable), 0)[4] == f"5,000→{after:,}"
        text = static_text(view.query_one("#chunks-analysis", Static))
        assert f"5,000 → {after:,} tok" in text
        assert f"summary {estimate_tokens(summary):,} tok" in text
        assert "runs        2" in text
        assert "▸ fix the crash in parse_config" in text and "▸ now update docs/USAGE.md" in text
        assert "edited      src/app/config_loader.py, docs/USAGE.md" in text
        # RetryPolicy and docs/USAGE.md were said/used but the summary names neither.
        assert "not named in the summary" in text
        dropped = text.split("not named in the summary")[1]
        assert "RetryPolicy" in dropped and "docs/USAGE.md" in dropped
        assert "parse_config" not in dropped and "src/app/config_loader.py" not in dropped
    manager.close()


async def test_chunks_view_pending_row_shows_its_events(memory: MemoryManager) -> None:
    view = ChunksView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        pending = list_pending(memory.paths)
        view.set_data([], pending)
        await pilot.pause()
        assert cells(view.query_one(DataTable), 0)[1] == "pending"
        assert "pending summary" in static_text(view.query_one("#chunks-summary", Static))
        assert "pending question" in static_text(view.query_one("#chunks-events", Static))


async def test_chunks_view_hostile_chunk_id_and_missing_file(memory: MemoryManager) -> None:
    hostile_id = "[@click=app.sentinel]x[/]\x1b[31m\u202e"
    entry = ChunkEntry(hostile_id, "[b", 1, "[@click=app.quit]a[/]", None, "s", None, {})
    gone = ChunkEntry("chunk_0404", "", 1, None, None, "", None, {})
    view = ChunksView()
    view.manager = memory
    app = ViewHost(view)
    async with app.run_test(size=(120, 24)) as pilot:  # wide: every column shown
        view.set_data([entry, gone], [])
        await settle(app, pilot)
        row = cells(view.query_one(DataTable), 0)
        assert row[0].startswith("[@click=app.sentinel]x[/]␛[31m")  # capped cell
        header = static_text(view.query_one("#chunks-summary", Static))
        assert header.startswith("[@click=app.sentinel]x[/]␛[31m<U+202E>  active")
        assert row[8] == "[@click=app.quit]a[/]" and row[7] == "[b"
        # The id is refused before any file is opened; the error is shown, not raised.
        events = static_text(view.query_one("#chunks-events", Static))
        assert "invalid chunk id" in events
        view.query_one(DataTable).focus()
        await press(pilot, "down")
        assert "missing file" in static_text(view.query_one("#chunks-events", Static))
        await pilot.click("#chunks-table", offset=(3, 1))
        assert app.sentinel_calls == 0 and app.is_running


async def test_chunks_view_unreadable_index_shows_error(memory: MemoryManager) -> None:
    memory.paths.index.write_text("chunks: [unbalanced\n  - {\n", encoding="utf-8")
    view = ChunksView()
    async with loaded(view, memory) as (app, _):
        error = static_text(view.query_one("#chunks-error", Static))
        assert "chunk index unreadable" in error and "index.yaml" in error
        assert "repair" in error
        assert view.query_one("#chunks-error").display
        # Pending evidence is still listed.
        assert cells(view.query_one(DataTable), 0)[1] == "pending"
        assert app.is_running


async def test_chunks_view_index_warning_for_hostile_id_entry(memory: MemoryManager) -> None:
    memory.paths.index.write_text(
        'version: 1\nchunks:\n  - chunk_id: "../../etc/passwd[@click=app.sentinel]x[/]"\n'
        "    summary: s\n  - chunk_id: chunk_0001\n    summary: ok\n",
        encoding="utf-8",
    )
    view = ChunksView()
    async with loaded(view, memory) as (app, pilot):
        notice = static_text(view.query_one("#chunks-error", Static))
        assert "warning:" in notice and "[@click=app.sentinel]x[/]" in notice
        assert cells(view.query_one(DataTable), 0)[0] == "chunk_0001"
        await pilot.click("#chunks-error", offset=(40, 0))
        assert app.sentinel_calls == 0


async def test_chunks_view_empty() -> None:
    view = ChunksView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.set_data([], [])
        await pilot.pause()
        assert view.query_one(DataTable).row_count == 0
        assert "No chunks yet" in static_text(view.query_one("#chunks-summary", Static))


# --- SummaryView ---------------------------------------------------------------------------


async def shown(app: App[Any], pilot: Any) -> None:
    """Wait for the workers (reads, styling, wrapping) and the messages they post."""
    for _ in range(3):
        await settle(app, pilot)


async def summary_shown(md: str, max_rolling_lines: int = 100) -> str:
    """`md` as the Summary tab shows it (no archive; the rolling summary's bound given)."""
    view = SummaryView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        await view.set_data(md, None, max_rolling_lines)
        await pilot.pause()
        return view.shown_text()


async def test_summary_view_reload_renders_and_counts(memory: MemoryManager) -> None:
    view = SummaryView()
    async with loaded(view, memory) as (app, pilot):
        await shown(app, pilot)
        rendered = view.shown_text()
        assert "Rolling Summary" in rendered and "Recent Chunks" in rendered
        assert "chunk_0002" in rendered and "**chunk_0002**" not in rendered
        status = static_text(view.query_one("#summary-status", Static))
        assert view.rolling_line_count == 1
        assert "1 / 5 lines" in status and "Recent Chunks 1" in status
        # Size against the bound stated in docs (core.compaction.summaries.summary_md_bound).
        bound = summary_md_bound(memory.config)
        assert f"/ {bound:,} bound" in status
        assert "[@click=app.quit]x[/]" in rendered
        assert "\x1b" not in rendered
        # Archive, raw: keys switch what is shown, focus stays in the view.
        view.query_one("#summary-doc").focus()
        await pilot.press("A")
        await shown(app, pilot)
        assert view.file == "archive"
        assert "chunk_0001" in view.shown_text()
        assert "summary_archive.md" in static_text(view.query_one("#summary-status", Static))
        await pilot.press("v")
        await shown(app, pilot)
        assert view.raw
        await pilot.press("A")
        await shown(app, pilot)
        raw = view.shown_text()
        assert "- **chunk_0002**" in raw and "␛[31mred" in raw and "\x1b" not in raw
        assert "summary.md (raw)" in static_text(view.query_one("#summary-status", Static))
        assert app.focused is view.query_one("#summary-doc")
        await pilot.press("v")
        await shown(app, pilot)
        assert not view.raw and "**chunk_0002**" not in view.shown_text()


async def test_summary_view_unchanged_text_is_not_rendered_again() -> None:
    md = "# Session History (compressed chunks)\n\n## Rolling Summary\n\n## Recent Chunks\n"
    view = SummaryView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        await view.set_data(md, None, 5)
        await pilot.pause()
        assert view.renders == 1
        await view.set_data(md, None, 5)
        await view.set_data(md, None, 5)
        await pilot.pause()
        assert view.renders == 1
        await view.set_data(md + "\n- **chunk_0001**\n  new\n", None, 5)
        await pilot.pause()
        assert view.renders == 2 and "chunk_0001" in view.shown_text()


async def test_summary_view_marks_the_split_turn_part() -> None:
    md = (
        "# Session History (compressed chunks)\n\n## Rolling Summary\n\n## Recent Chunks\n\n"
        "- **chunk_0003**\n  history: asked about logs\n\n  ---\n\n"
        "  Turn Context (split turn):\n  prefix: started grepping\n"
    )
    text = await summary_shown(md, max_rolling_lines=5)
    lines = text.split("\n")
    assert any("✂ split turn: turn context" in line for line in lines)
    assert not any("Turn Context (split turn):" in line for line in lines)
    assert any(line.strip() == "│ prefix: started grepping" for line in lines)
    # At most one blank line in a row: no screen of empty rules.
    assert "\n\n\n" not in text


@pytest.mark.extended  # 90 clicks over the text, ~9 s: CI runs it as its own step
async def test_summary_view_links_never_run_anything() -> None:
    hostile_md = (
        "# Session History (compressed chunks)\n\n## Rolling Summary\n\n"
        "[a link](app.sentinel) <file:///etc/passwd> [@click=app.sentinel]x[/]\n\n"
        "## Recent Chunks\n\n- **chunk_0001**\n  see [here](javascript:alert(1))\n"
    )
    view = SummaryView()
    app = ViewHost(view)
    opened: list[str] = []
    app.open_url = lambda url, *a, **k: opened.append(url)  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await view.set_data(hostile_md, None, 100)
        await pilot.pause()
        doc = view.query_one("#summary-doc")
        for y in range(6):
            for x in range(0, 60, 4):
                await pilot.click(doc, offset=(x, y))
        await pilot.pause()
        assert app.sentinel_calls == 0 and app.is_running and opened == []
        assert "[@click=app.sentinel]x[/]" in view.shown_text()
        assert "[a link](app.sentinel)" in view.shown_text()


async def test_summary_view_keeps_each_line_of_a_chunk_summary() -> None:
    md = (
        "# Session History (compressed chunks)\n\n## Rolling Summary\n\n"
        "old line one\nold line two\n\n## Recent Chunks\n\n"
        "- **chunk_0007**\n  Goal:\n  - tidy storage\n  Progress:\n  Done and verified.\n"
        "  Key Decisions: keep photos\n"
    )
    lines = [line.strip(" •▪") for line in (await summary_shown(md)).split("\n")]
    for line in (
        "old line one",
        "old line two",
        "chunk_0007",
        "Goal:",
        "- tidy storage",
        "Progress:",
        "Done and verified.",
        "Key Decisions: keep photos",
    ):
        assert line in lines, (line, lines)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "just [b some\x1b[31m nonsense\n```\nunclosed fence",
        "x" * 300_000,
        "## Recent Chunks\n- **[@click=app.quit]x[/]**\n  \u202eevil\n",
    ],
)
async def test_summary_view_hand_edited_files_render(text: str) -> None:
    view = SummaryView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        await view.set_data(text, "", 100)
        await pilot.pause()
        status = static_text(view.query_one("#summary-status", Static))
        assert "summary.md" in status
        if not text.strip():
            assert "empty" in status
            assert "summary.md is empty" in view.shown_text()
        else:
            assert "⚠" in status  # parse_summary_md's problems are listed
            assert "\x1b" not in view.shown_text() and "\u202e" not in view.shown_text()
        await pilot.press("tab", "v")
        await shown(app, pilot)
        assert app.is_running and app.sentinel_calls == 0


async def test_summary_view_missing_files_and_over_cap() -> None:
    view = SummaryView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        await view.set_data(None, None, 100)
        assert view.rolling_line_count is None
        assert "No summary.md yet" in view.shown_text()
        lines = "\n".join(f"line {i}" for i in range(7))
        md = (
            "# Session History (compressed chunks)\n\n## Rolling Summary\n\n"
            f"{lines}\n\n## Recent Chunks\n"
        )
        await view.set_data(md, None, 5)
        await pilot.pause()
        assert view.rolling_line_count == 7
        assert "7 / 5 lines" in static_text(view.query_one("#summary-status", Static))
        # No archive: said so, and the status shows no figures of summary.md.
        view.action_toggle_file()
        await shown(app, pilot)
        status = static_text(view.query_one("#summary-status", Static))
        assert "no archive yet" in status and "7 / 5" not in status
        assert "No archive yet" in view.shown_text()


async def test_summary_view_one_megabyte_keeps_the_loop_responsive() -> None:
    """A 1 MB summary.md is styled and wrapped off the event loop: while it is prepared the
    loop keeps serving timers, and only the rows on screen are drawn."""
    entry = (
        "- **chunk_{0:04d}**\n" + "  Progress: edited src/module_{0}.py and ran pytest -q\n" * 12
    )
    md = "# Session History (compressed chunks)\n\n## Rolling Summary\n\n## Recent Chunks\n\n"
    i = 0
    while len(md) < 1_000_000:
        md += entry.format(i) + "\n"
        i += 1
    view = SummaryView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        ticks: list[float] = []
        loop = asyncio.get_running_loop()
        timer = app.set_interval(0.01, lambda: ticks.append(loop.time()))
        start = loop.time()
        await view.set_data(md, None, 5)
        took = loop.time() - start
        timer.stop()
        gaps = [b - a for a, b in itertools.pairwise(ticks)]
        assert view.query_one("#summary-doc", TextDocument).rows > 20_000
        # A frozen loop shows one gap as long as the whole preparation; a shared, loaded
        # machine shows short stalls at most.
        assert gaps and max(gaps) < max(0.5, took * 0.6), (max(gaps), took)
        await pilot.press("end")
        await pilot.pause()
        assert "chunk_" in view.shown_text()


# --- PromptView ----------------------------------------------------------------------------


async def test_prompt_view_shows_assembled_prompt_with_tokens(memory: MemoryManager) -> None:
    view = PromptView(system_prompt="SYS [@click=app.sentinel]x[/]", task="do the thing")
    view.context_window = 1000
    async with loaded(view, memory, host=RecordingHost) as (app, pilot):
        expected = memory.build_prompt("SYS [@click=app.sentinel]x[/]", "do the thing")
        table = view.query_one(DataTable)
        assert table.row_count == len(expected) == 4
        roles = [cells(table, i)[1] for i in range(4)]
        assert roles == ["system", "user", "assistant", "user"]
        tokens = [estimate_message_tokens(m) for m in expected]
        assert [cells(table, i)[2] for i in range(4)] == [f"{t:,}" for t in tokens]
        assert cells(table, 3)[3] == f"{sum(tokens):,}"
        assert view.total_tokens == sum(tokens)
        total = static_text(view.query_one("#prompt-total", Static))
        assert f"~{sum(tokens):,} / 1,000 tokens" in total and "4 messages" in total
        # The system message carries summary.md; it is shown literally.
        detail = static_text(view.query_one("#prompt-message", Static))
        assert detail.startswith("#0 system")
        assert "SYS [@click=app.sentinel]x[/]" in detail and "## Rolling Summary" in detail
        assert "\x1b" not in detail
        await pilot.click("#prompt-message", offset=(8, 1))
        assert app.sentinel_calls == 0
        # Editing the task and pressing enter rebuilds.
        task = view.query_one("#prompt-task", Input)
        task.value = ""
        view.query_one(DataTable).focus()
        await pilot.press("e")
        assert app.focused is task
        await press(pilot, *"new task words", "enter")
        assert cells(table, 3)[4] == "new task words"
        built = app.of(PromptView.Built)
        assert built and built[-1].message_count == 4 and built[-1].context_window == 1000


async def test_prompt_view_first_painted_frame_shows_whole_cells() -> None:
    """A frame painted before the table's idle must not keep truncated cells ("sys…")."""
    view = PromptView()
    app = ViewHost(view)
    messages = [
        {"role": "system", "content": "system prompt " * 4},
        {"role": "assistant", "content": "an answer"},
    ]
    async with app.run_test(size=(120, 24)) as pilot:
        await pilot.pause()
        table = view.query_one(DataTable)
        for _ in range(3):  # the first fill and two refills, each painted before any idle
            view.set_messages(messages, 1000)
            painted = [table.render_line(y).text for y in range(3)]
            await pilot.pause()
            again = [table.render_line(y).text for y in range(3)]
            assert painted == again
            assert "system " in painted[1] and "assistant " in painted[2], painted
            assert "\u2026" not in painted[1] + painted[2]


async def test_prompt_view_role_column_is_capped_for_narrow_terminals() -> None:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": f"long_tool_name_{i}"}}
        for i in range(4)
    ]
    view = PromptView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view.set_messages([{"role": "assistant", "content": None, "tool_calls": calls}], 1000)
        await pilot.pause()
        table = view.query_one(DataTable)
        role = table.columns[ColumnKey("role")]
        assert role.width == 28 and not role.auto_width
        painted = table.render_line(1).text
        assert "assistant calls long_tool_n\u2026 " in painted, painted
        assert cells(table, 0)[1].startswith("assistant calls long_tool_name_0,")


async def test_prompt_view_tool_calls_and_plain_data() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "\x1b]0;title\x07 hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "grep", "arguments": '{"q":"[@click=app.quit]"}'},
                }
            ],
        },
        {"role": "tool", "content": "out", "tool_call_id": "c1"},
        {"role": "user", "content": "task"},
    ]
    view = PromptView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.set_messages(messages, 100, compress_at_percent=80)
        await pilot.pause()
        table = view.query_one(DataTable)
        assert cells(table, 2)[1] == "assistant calls grep"
        assert cells(table, 3)[1] == "tool ← c1"
        assert cells(table, 1)[4] == "␛]0;title␇ hi"
        table.focus()
        await pilot.press("down", "down")
        detail = static_text(view.query_one("#prompt-message", Static))
        assert "tool call:" in detail and "[@click=app.quit]" in detail
        await pilot.press("enter")
        assert app.focused is view.query_one("#prompt-detail")
        await pilot.press("escape")
        assert app.focused is table
        await pilot.press("E")
        assert app.focused is view.query_one("#prompt-system")
        await pilot.press("escape")
        assert app.focused is table


# --- RecallView ----------------------------------------------------------------------------


async def test_recall_view_search_active_and_pending(memory: MemoryManager) -> None:
    view = RecallView()
    view.manager = memory
    app = RecordingHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.query_one("#recall-query", Input).focus()
        await press(pilot, *"question", "enter")
        table = view.query_one(DataTable)
        sources = {cells(table, i)[0].strip() for i in range(table.row_count)}
        assert "pending" in sources
        status = static_text(view.query_one("#recall-status", Static))
        assert "pending_chunks_recalled: 1" in status
        searched = app.of(RecallView.Searched)
        assert searched and searched[-1].pending_chunks_recalled == 1
        assert searched[-1].query == "question"

        query = view.query_one("#recall-query", Input)
        query.value = "logs"
        query.focus()
        await press(pilot, "enter")
        rows = [cells(table, i) for i in range(table.row_count)]
        assert {r[1] for r in rows} >= {"chunk_0001"}
        assert all(r[0].strip() == "active" for r in rows)
        assert "pending_chunks_recalled: 0" in static_text(view.query_one("#recall-status", Static))
        summary = static_text(view.query_one("#recall-summary", Static))
        assert "active" in summary and "logs" in summary


async def test_recall_view_badges_and_hostile_hit() -> None:
    hostile_event = ev("user_input", HOSTILE_TEXT)
    result = RecallResult.of(
        [
            RecallHit("chunk_0001", "active", 2.5, SPLIT_SUMMARY, []),
            RecallHit("[@click=app.sentinel]id[/]", "pending", 1.25, HOSTILE_TEXT, [hostile_event]),
        ]
    )
    view = RecallView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.set_result("click", result)
        await pilot.pause()
        table = view.query_one(DataTable)
        active, pending = table.get_row_at(0)[0], table.get_row_at(1)[0]
        assert active.plain.strip() == "active" and pending.plain.strip() == "pending"
        assert active.style != pending.style
        assert cells(table, 1)[1] == "[@click=app.sentinel]id[/]"
        assert cells(table, 0)[2] == "2.500"
        assert "split turn: turn context" in static_text(view.query_one("#recall-summary", Static))
        table.focus()
        await pilot.press("down")
        events = static_text(view.query_one("#recall-events", Static))
        assert "1 matching event(s)" in events and "[@click=app.sentinel]run[/]" in events
        for selector in ("#recall-summary", "#recall-events", "#recall-table"):
            for x in range(0, 70, 7):
                await pilot.click(selector, offset=(x, 1))
        assert app.sentinel_calls == 0 and app.is_running
        # "/" jumps to the search box, and typed there it is text.
        table.focus()
        await pilot.press("slash")
        assert app.focused is view.query_one("#recall-query")
        await pilot.press("a", "slash", "b")
        assert view.query_text == "a/b"


async def test_recall_view_unreadable_index_and_empty_query(memory: MemoryManager) -> None:
    memory.paths.index.write_text("chunks: [\n", encoding="utf-8")
    view = RecallView()
    view.manager = memory
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.search("   ")
        await pilot.pause()
        assert "type something" in static_text(view.query_one("#recall-status", Static))
        view.search("logs")
        await settle(app, pilot)
        status = static_text(view.query_one("#recall-status", Static))
        assert "recall failed" in status and "index.yaml" in status
        assert view.query_one(DataTable).row_count == 0 and app.is_running


# --- ArchiveView ---------------------------------------------------------------------------


async def test_archive_view_lists_and_opens(memory: MemoryManager) -> None:
    closed = memory.rotate()
    assert closed.closed_session_id is not None
    view = ArchiveView()
    async with loaded(view, memory, (120, 24), RecordingHost) as (app, pilot):  # every column
        table = view.query_one(DataTable)
        assert table.row_count == 1
        row = cells(table, 0)
        assert row[0] == closed.closed_session_id
        # Rotation first finishes the pending evidence: it became a third chunk.
        assert row[3] == "2" and row[4] == "3"
        assert row[2].endswith(("B", "KB"))
        assert row[5] == "root task"  # the first request, read from its events.jsonl
        table.focus()
        await pilot.press("enter")
        await pilot.pause()
        opened = app.of(ArchiveView.OpenArchive)
        assert [(m.session_id, m.path) for m in opened] == [
            (closed.closed_session_id, closed.archive_path)
        ]
        await pilot.press("o")
        await pilot.pause()
        assert len(app.of(ArchiveView.OpenArchive)) == 2


async def test_archive_view_hostile_and_empty() -> None:
    info = ArchiveInfo("[@click=app.sentinel]s[/]\x1b[2J", Path("/x"), 3, 0, "[b", 5 * 1024 * 1024)
    view = ArchiveView()
    app = ViewHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.set_data([])
        await pilot.pause()
        assert "No closed sessions" in static_text(view.query_one("#archive-error", Static))
        view.set_data([info])
        await pilot.pause()
        row = cells(view.query_one(DataTable), 0)
        assert row == ["[@click=app.sentinel]s[/]␛[2J", "[b", "5.0 MB", "3", "0", ""]
        await pilot.click("#archive-table", offset=(4, 1))
        assert app.sentinel_calls == 0 and app.is_running


def _info(sid: str, created: str, size: int, events: int) -> ArchiveInfo:
    return ArchiveInfo(sid, Path("/x") / sid, events, 1, created, size)


async def test_archive_view_filter_and_sort() -> None:
    archives = [
        _info("s-a", "2026-01-01T10:00:00Z", 100, 5),
        _info("s-b", "2026-03-01T10:00:00Z", 900, 2),
        _info("s-c", "2026-02-01T10:00:00Z", 500, 9),
    ]
    requests = {"s-a": "book a table", "s-b": "fix the parser", "s-c": "book a flight"}
    view = ArchiveView()
    app = ViewHost(view)
    async with app.run_test(size=(100, 24)) as pilot:
        view.set_data(archives, requests=requests)
        await pilot.pause()
        table = view.query_one(DataTable)

        def ids() -> list[str]:
            return [cells(table, i)[0] for i in range(table.row_count)]

        assert ids() == ["s-b", "s-c", "s-a"]  # newest first
        assert "sorted newest first" in static_text(view.query_one("#archive-error", Static))
        table.focus()
        await pilot.press("t")
        assert ids() == ["s-a", "s-c", "s-b"]
        await pilot.press("t")
        assert ids() == ["s-b", "s-c", "s-a"]  # largest first
        await pilot.press("t")
        assert ids() == ["s-c", "s-a", "s-b"]  # most events first
        await pilot.press("f", *"book")
        await pilot.pause()
        assert sorted(ids()) == ["s-a", "s-c"]
        assert "2 of 3 closed sessions" in static_text(view.query_one("#archive-error", Static))
        await pilot.press(*"xyz")
        await pilot.pause()
        assert ids() == []
        assert "No closed session matches" in static_text(view.query_one("#archive-error", Static))


class EscapeHost(ViewHost):
    """An app with its own escape binding, as the inspector has (back to the hot window)."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape", "app_escape", "")]

    def __init__(self, view: Widget) -> None:
        super().__init__(view)
        self.app_escapes = 0

    def action_app_escape(self) -> None:
        self.app_escapes += 1


@pytest.mark.parametrize("kind", ["chunks", "prompt", "recall"])
async def test_escape_on_the_table_reaches_the_app(kind: str) -> None:
    view: Widget = {"chunks": ChunksView, "prompt": PromptView, "recall": RecallView}[kind]()
    app = EscapeHost(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.query_one(f"#{kind}-detail").focus()
        await pilot.press("escape")
        assert app.focused is view.query_one(f"#{kind}-table") and app.app_escapes == 0
        await pilot.press("escape")
        assert app.app_escapes == 1


# --- files vanishing, huge lines -----------------------------------------------------------


async def test_chunks_dir_deleted_then_replaced_by_a_file(memory: MemoryManager) -> None:
    view = ChunksView()
    async with loaded(view, memory) as (app, pilot):
        shutil.rmtree(memory.paths.chunks_dir)
        view.query_one(DataTable).focus()
        await press(pilot, "down")
        assert "missing file" in static_text(view.query_one("#chunks-events", Static))
        view.reload()
        await settle(app, pilot)
        assert view.query_one(DataTable).row_count == 0
        memory.paths.chunks_dir.write_text("not a folder", encoding="utf-8")
        view.reload()
        await settle(app, pilot)
        assert "index.yaml" in static_text(view.query_one("#chunks-error", Static))
        recall = RecallView()
        recall.manager = memory
        await app.mount(recall)
        recall.search("logs")
        await settle(app, pilot)
        assert "recall failed" in static_text(recall.query_one("#recall-status", Static))
        assert app.is_running


async def test_huge_single_line_event_is_capped(memory: MemoryManager) -> None:
    huge = "[@click=app.sentinel]" + "y" * 5_000_000
    with memory.store.lock():
        write_chunk_file(memory.paths, "chunk_0001", [ev("tool_result", huge, name="dump")])
    chunks = ChunksView()
    prompt = PromptView()
    async with loaded(chunks, memory) as (app, pilot):
        events = static_text(chunks.query_one("#chunks-events", Static))
        assert "[@click=app.sentinel]yyy" in events and len(events) < 2_000
        await app.mount(prompt)
        prompt.set_messages([{"role": "tool", "content": huge}], 128_000)
        await pilot.pause()
        detail = static_text(prompt.query_one("#prompt-message", Static))
        assert len(detail) < 60_000 and "more chars" in detail
        assert (
            cells(prompt.query_one(DataTable), 0)[2]
            == f"{estimate_message_tokens({'role': 'tool', 'content': huge}):,}"
        )
        chunks.query_one("#chunks-events").scroll_visible(animate=False, immediate=True)
        await pilot.pause()
        await pilot.click("#chunks-events", offset=(10, 1))
        assert app.sentinel_calls == 0 and app.is_running
