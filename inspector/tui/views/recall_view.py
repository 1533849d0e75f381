"""RecallView: a search box over compacted history (`MemoryManager.recall`), with source
badges, scores, summaries and the matching events; with "all sessions" ticked, archived
sessions are searched too and each result names its session.

Public API (for the app):

    view = RecallView(id="recall", limit=10)
    view.manager: MemoryManager | None  # attach() sets it; search() runs through it
    view.limit: int                          # results asked for (default 10)
    view.all_sessions: bool                  # archived sessions too (the checkbox)
    view.search(query: str) -> None          # runs manager.recall(query, limit) in a thread
                                             # worker; also what enter in the box does
    view.set_result(query: str, result: RecallResult | None,
                    error: str | None = None, elapsed_ms: float | None = None) -> None
        # Plain data in (e.g. a recall the app ran itself). error: shown instead of results.
    view.query_text -> str                   # what the search box holds

Results: a table (source badge — "active" and "pending" styled differently —, chunk id,
score, number of matching events, session, summary preview) and, for the cursor row, the
summary (split turn marked) and the matching events with the query's terms highlighted
(`core.recall.ranking.highlight_spans` offsets styled on the safe text: no markup from
events). Enter on a row opens the result: every event of its chunk, the matched ones marked
and the first of them selected and scrolled to. The status line says how many results and
`pending_chunks_recalled`. Escape goes back to the table; "/" focuses the search box.
Message posted (bubbles) after each search: `RecallView.Searched(query: str, result_count:
int, pending_chunks_recalled: int, elapsed_ms: float | None, error: str | None)` — for the
activity log.
Styles: inspector/tui/styles/widgets/recall_view.tcss.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Checkbox, DataTable, Input, Static

from core.index.chunk_files import read_chunk_events
from core.recall.ranking import RecallHit, RecallResult, highlight_spans
from core.store.paths import MemoryPaths
from inspector.safe_text import safe_line
from inspector.tui.tables import replace_rows
from inspector.tui.views.chunks_view import (
    MAX_EVENTS_SHOWN,
    describe_error,
    events_text,
    summary_text,
)
from inspector.tui.views.session_view import SessionView

BADGE_STYLE = {
    "active": "bold black on green",
    "pending": "bold black on yellow",
    "archived": "bold black on magenta",
}

RECALL_NAVIGATION_KEYS = frozenset(
    {*(str(n) for n in range(1, 10)), "question_mark", "q", "slash", "space"}
)
"""Keys that keep their bindings on the Recall tab while its results have the keyboard (tab
numbers, the legend, quit, `/` to search, the demo's play/pause); any other printable key
typed there starts the search."""


FOOTER_RECALL_TYPED = frozenset(
    {"maintenance", "compact", "rotate", "append", "repair", "back_to_active", "toggle_follow"}
)
"""Actions whose letter keys start a search on the Recall tab: the footer leaves them out
there (they stay in the palette)."""


def shown_source(hit: RecallHit) -> str:
    """The source a person reads: `archived` for a result from a closed session (the core
    reports the source it had in that session)."""
    return "archived" if hit.archived else str(hit.source)


def source_badge(source: str) -> Text:
    """The source as a badge; text differs too, so it reads without colour (NO_COLOR)."""
    return Text(f" {source} ", style=BADGE_STYLE.get(source, "bold reverse"))


def highlight_terms(text: Text, query: str) -> Text:
    """Style where the query's terms and phrases occur, as recall tokenizes them (whole
    identifiers, their pieces, CamelCase parts, CJK bigrams): spans on the already safe text,
    so nothing from an event is ever read as markup."""
    for start, end in highlight_spans(text.plain, query):
        text.stylize("reverse", start, end)
    return text


def session_cell(hit: RecallHit) -> Text:
    if hit.archived:
        return safe_line(hit.session_id or "?", "magenta", limit=40)
    return Text("current", style="dim")


EVENT_LINES = 2
"""Lines `events_text` gives each event (a header and a preview)."""


def chunk_text(events: list[dict[str, object]], matched_ids: set[object]) -> tuple[Text, int]:
    """Every event of a chunk, the matched ones marked and the first of them selected; and the
    line of the selected event (-1 when none matched)."""
    text = events_text(events)
    lines = text.plain.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    selected = -1
    for i, event in enumerate(events[:MAX_EVENTS_SHOWN]):
        if event.get("id") not in matched_ids:
            continue
        first = i * EVENT_LINES
        if first + EVENT_LINES > len(lines):
            break
        style = "bold on dark_green" if selected < 0 else "bold"
        text.stylize(style, starts[first], starts[first + EVENT_LINES] - 1)
        if selected < 0:
            selected = first
    return text, selected


EMPTY_RECALL_NOTE = "the hot window is not searched (it is in the prompt already)"
"""Said with an empty result: recall searches compacted history only."""

RECALL_HINT = (
    "Results show here: each one's summary and the events that matched; enter opens the "
    "result in its chunk. Recall searches the chunks compacted from this session (source "
    "active) and evidence of a pass that has not finished (source pending), not the hot "
    'window (in the prompt already); tick "all sessions" to search archived sessions too '
    "(source archived). / or any letter starts a search."
)


class RecallView(SessionView):
    """Search compacted history; results with their source badges and matching events."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_search", "Search", id="recall.search"),
        Binding("escape", "focus_table", "Back to results", show=False, id="recall.back"),
    ]
    TABLE = "#recall-table"

    FOOTER_KEYS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ("enter", "enter", "search"),
        ("escape", "esc", "results"),
        ("tab", "tab", "all sessions"),
    )
    """(key, shown as, what) for the footer while the search field has the keyboard (the
    field takes every printable key, so the app's letter keys are not shown then)."""

    @dataclass(eq=False)
    class Searched(Message):
        """A search finished (or failed)."""

        query: str
        result_count: int
        pending_chunks_recalled: int
        elapsed_ms: float | None
        error: str | None

    @dataclass(eq=False)
    class _Done(Message):
        """The search worker's result (or why it failed)."""

        query: str
        result: RecallResult | None
        error: str | None
        elapsed_ms: float

    def __init__(
        self,
        *,
        limit: int = 10,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.limit = limit
        self.all_sessions = False
        self._hits: list[RecallHit] = []
        self._query = ""

    def compose(self) -> ComposeResult:
        with Horizontal(id="recall-bar"):
            yield Input(
                placeholder="search compacted history, then enter",
                id="recall-query",
                compact=True,
            )
            yield Checkbox("all sessions", id="recall-all", compact=True)
        yield Static(
            Text("Type words to search chunk summaries and events.", style="dim"),
            id="recall-status",
        )
        table: DataTable[Text] = DataTable(id="recall-table", cursor_type="row", zebra_stripes=True)
        yield table
        with VerticalScroll(id="recall-detail", can_focus=True):
            yield Static(Text(RECALL_HINT, style="dim"), id="recall-summary", markup=False)
            yield Static(Text(""), id="recall-events", markup=False)

    def on_mount(self) -> None:
        table: DataTable[Text] = self.query_one("#recall-table", DataTable)
        table.add_columns("source", "chunk id", "score", "hits", "session", "summary")

    @property
    def query_text(self) -> str:
        return self.query_one("#recall-query", Input).value

    def search_for(self, query: str) -> None:
        """Put `query` in the search field and search for it (the Timeline's `r`)."""
        self.query_one("#recall-query", Input).value = query
        self.search(query)

    def search(self, query: str) -> None:
        """Run a recall in a thread worker (the UI never waits on it)."""
        query = query.strip()
        if not query:
            self.set_result("", None, "type something to search for")
            return
        if self.manager is None:
            self.set_result(query, None, "no session attached")
            return
        self.query_one("#recall-status", Static).update(
            Text.assemble(("searching for ", "dim"), safe_line(query, "bold", limit=80), "\u2026")
        )
        self._search_worker(query, self.limit, self.all_sessions)

    @work(thread=True, exclusive=True, group="recall-search")
    def _search_worker(self, query: str, limit: int, all_sessions: bool) -> None:
        manager = self.manager
        if manager is None:
            return
        started = time.perf_counter()
        try:
            result = manager.recall(query, limit, all_sessions=all_sessions)
            done = self._Done(query, result, None, 0.0)
        except Exception as exc:
            done = self._Done(query, None, describe_error(exc), 0.0)
        done.elapsed_ms = (time.perf_counter() - started) * 1000
        self.post_result(done)

    @on(_Done)
    def _on_done(self, message: _Done) -> None:
        message.stop()
        self.set_result(message.query, message.result, message.error, message.elapsed_ms)

    def set_result(
        self,
        query: str,
        result: RecallResult | None,
        error: str | None = None,
        elapsed_ms: float | None = None,
    ) -> None:
        """Show a recall result (or an error line instead)."""
        self._query = query
        self._hits = list(result.results) if result is not None else []
        table: DataTable[Text] = self.query_one("#recall-table", DataTable)
        rows: list[tuple[str, list[Text]]] = []
        for i, hit in enumerate(self._hits):
            cells = [
                source_badge(shown_source(hit)),
                safe_line(hit.chunk_id, "bold", limit=32),
                Text(f"{hit.score:.3f}", justify="right"),
                Text(str(len(hit.events)), justify="right"),
                session_cell(hit),
                safe_line(hit.summary, limit=120),
            ]
            rows.append((str(i), cells))
        replace_rows(table, rows)
        status = Text()
        if error is not None:
            status.append_text(safe_line(f"recall failed: {error}", "bold red", limit=300))
        else:
            count = len(self._hits)
            status.append(f"{count} result{'s' if count != 1 else ''}", style="bold")
            status.append(" for ")
            status.append_text(safe_line(query, "italic", limit=60))
            pending = result.pending_chunks_recalled if result is not None else 0
            status.append(f"  \u00b7  pending_chunks_recalled: {pending}")
            if not count:
                status.append(f"  \u00b7  {EMPTY_RECALL_NOTE}", style="dim")
            if elapsed_ms is not None:
                status.append(f"  \u00b7  {elapsed_ms:.0f} ms", style="dim")
        self.query_one("#recall-status", Static).update(status)
        if self._hits:
            table.move_cursor(row=0)
            self._show_hit(0)
        else:
            self._show_hit(-1)
        self.post_message(
            self.Searched(
                query,
                len(self._hits),
                result.pending_chunks_recalled if result is not None else 0,
                elapsed_ms,
                error,
            )
        )

    def _show_hit(self, row: int) -> None:
        summary = self.query_one("#recall-summary", Static)
        events = self.query_one("#recall-events", Static)
        if not 0 <= row < len(self._hits):
            summary.update(Text(RECALL_HINT, style="dim"))
            events.update(Text(""))
            return
        hit = self._hits[row]
        header = Text()
        header.append_text(source_badge(shown_source(hit)))
        header.append(" ")
        header.append_text(safe_line(hit.chunk_id, "bold", limit=120))
        header.append(f"  score {hit.score:.3f}", style="dim")
        if hit.archived:
            header.append("  session ")
            header.append_text(safe_line(hit.session_id or "?", "magenta", limit=60))
        header.append("\n")
        header.append_text(highlight_terms(summary_text(hit.summary), self._query))
        summary.update(header)
        shown = Text(f"\n{len(hit.events)} matching event(s):\n", style="bold")
        shown.append_text(highlight_terms(events_text(hit.events), self._query))
        events.update(shown)

    @on(Input.Submitted, "#recall-query")
    def _on_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.search(event.value)

    @on(DataTable.RowHighlighted, "#recall-table")
    def _on_row(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_hit(event.cursor_row)

    @on(DataTable.RowSelected, "#recall-table")
    def _on_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.open_hit(event.cursor_row)

    @on(Checkbox.Changed, "#recall-all")
    def _on_all_sessions(self, event: Checkbox.Changed) -> None:
        event.stop()
        self.all_sessions = event.value
        if self._query:
            self.search(self._query)

    def open_hit(self, row: int) -> None:
        """Show the result's event in its chunk: every event of the chunk, the matched ones
        marked, the first of them selected and scrolled to; focus moves to the detail."""
        if not 0 <= row < len(self._hits):
            return
        hit = self._hits[row]
        matched = {e.get("id") for e in hit.events}
        events: list[dict[str, object]] = list(hit.events)
        note = "pending evidence: its matched events"
        if hit.source == "active" and self.manager is not None:
            try:
                events = list(read_chunk_events(self._paths_of(hit), hit.chunk_id)[0])
                note = f"all {len(events)} events of the chunk"
            except Exception as exc:  # shown, never raised into the UI
                note = f"cannot read the chunk ({describe_error(exc)}); its matched events"
        body, selected = chunk_text(events, matched)
        shown = Text("\n")
        shown.append_text(safe_line(hit.chunk_id, "bold", limit=80))
        shown.append(f": {note}\n", style="bold")
        top = 2
        shown.append_text(highlight_terms(body, self._query))
        self.query_one("#recall-events", Static).update(shown)
        detail = self.query_one("#recall-detail", VerticalScroll)
        detail.focus()
        if selected >= 0:
            summary_lines = self.query_one("#recall-summary", Static).size.height
            line = summary_lines + top + selected
            self.call_after_refresh(detail.scroll_to, y=max(0, line - 1), animate=False)

    def _paths_of(self, hit: RecallHit) -> MemoryPaths:
        assert self.manager is not None
        if hit.archived and hit.session_id:
            return MemoryPaths.for_archive(self.manager.memory_dir, hit.session_id)
        return self.manager.paths

    def action_focus_search(self) -> None:
        self.query_one("#recall-query").focus()
