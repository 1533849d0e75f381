"""RecallView: a search box over the active session's compacted history
(`MemoryManager.recall`), with source badges, scores, summaries and the matching events.

Public API (for the app):

    view = RecallView(id="recall", limit=10)
    view.manager: MemoryManager | None       # set by the app; search() runs through it
    view.limit: int                          # results asked for (default 10)
    view.search(query: str) -> None          # runs manager.recall(query, limit) in a thread
                                             # worker; also what enter in the box does
    view.set_result(query: str, result: RecallResult | None,
                    error: str | None = None, elapsed_ms: float | None = None) -> None
        # Plain data in (e.g. a recall the app ran itself). error: shown instead of results.
    view.query_text -> str                   # what the search box holds

Results: a table (source badge — "active" and "pending" styled differently —, chunk id,
score, number of matching events, summary preview) and, for the cursor row, the summary (split
turn marked) and the matching events with the query's words highlighted. The status line says
how many results and `pending_chunks_recalled`. Enter on a row focuses the detail, escape goes
back; "/" focuses the search box.
Message posted (bubbles) after each search: `RecallView.Searched(query: str, result_count:
int, pending_chunks_recalled: int, elapsed_ms: float | None, error: str | None)` — for the
activity log. Archives are never searched (the manager only searches the active session).
Styles: inspector/styles/widgets/recall_view.tcss.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from core.recall import RecallHit, RecallResult
from inspector.safe_text import safe_line, trail_blanks
from inspector.tables import replace_rows
from inspector.widgets.chunks_view import describe_error, events_text, summary_text

if TYPE_CHECKING:
    from core.manager import MemoryManager

BADGE_STYLE = {"active": "bold black on green", "pending": "bold black on yellow"}


def source_badge(source: str) -> Text:
    """The source as a badge; text differs too, so it reads without colour (NO_COLOR)."""
    return Text(f" {source} ", style=BADGE_STYLE.get(source, "bold reverse"))


def highlight_terms(text: Text, query: str) -> Text:
    words = [w for w in query.split() if len(w) >= 2]
    if words:
        text.highlight_words(words, style="reverse", case_sensitive=False)
    return text


RECALL_HINT = (
    "Results show here: each one's summary and the events that matched. Recall searches "
    "the chunks compacted from this session (source active) and evidence of a pass that has "
    "not finished (source pending); archived sessions are never searched."
)


class RecallView(Vertical):
    """Search compacted history; results with their source badges and matching events."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_search", "Search", id="recall.search"),
        Binding("escape", "focus_table", "Back to results", show=False, id="recall.back"),
    ]

    class Searched(Message):
        """A search finished (or failed)."""

        def __init__(
            self,
            query: str,
            result_count: int,
            pending_chunks_recalled: int,
            elapsed_ms: float | None,
            error: str | None,
        ) -> None:
            super().__init__()
            self.query = query
            self.result_count = result_count
            self.pending_chunks_recalled = pending_chunks_recalled
            self.elapsed_ms = elapsed_ms
            self.error = error

    class _Done(Message):
        def __init__(
            self, query: str, result: RecallResult | None, error: str | None, elapsed_ms: float
        ) -> None:
            super().__init__()
            self.query = query
            self.result = result
            self.error = error
            self.elapsed_ms = elapsed_ms

    def __init__(
        self,
        *,
        limit: int = 10,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.manager: MemoryManager | None = None
        self.limit = limit
        self._hits: list[RecallHit] = []
        self._query = ""

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="search compacted history, then enter", id="recall-query", compact=True
        )
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
        table.add_columns("source", "chunk id", "score", "hits", "summary")

    @property
    def query_text(self) -> str:
        return self.query_one("#recall-query", Input).value

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
        self._search_worker(query, self.limit)

    @work(thread=True, exclusive=True, group="recall-search")
    def _search_worker(self, query: str, limit: int) -> None:
        manager = self.manager
        if manager is None:
            return
        started = time.perf_counter()
        try:
            done = self._Done(query, manager.recall(query, limit), None, 0.0)
        except Exception as exc:
            done = self._Done(query, None, describe_error(exc), 0.0)
        done.elapsed_ms = (time.perf_counter() - started) * 1000
        if not get_current_worker().is_cancelled:
            self.post_message(done)

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
                source_badge(hit.source),
                safe_line(hit.chunk_id, "bold", limit=32),
                Text(f"{hit.score:.3f}", justify="right"),
                Text(str(len(hit.events)), justify="right"),
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
            if elapsed_ms is not None:
                status.append(f"  \u00b7  {elapsed_ms:.0f} ms", style="dim")
        self.query_one("#recall-status", Static).update(trail_blanks(status))
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
        header.append_text(source_badge(hit.source))
        header.append(" ")
        header.append_text(safe_line(hit.chunk_id, "bold", limit=120))
        header.append(f"  score {hit.score:.3f}\n", style="dim")
        header.append_text(highlight_terms(summary_text(hit.summary), self._query))
        summary.update(trail_blanks(header))
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
        self.query_one("#recall-detail").focus()

    def action_focus_search(self) -> None:
        self.query_one("#recall-query").focus()

    def action_focus_table(self) -> None:
        """Back to the table; on the table itself, escape goes on to the app's binding."""
        table = self.query_one("#recall-table")
        if table.has_focus:
            raise SkipAction()
        table.focus()
