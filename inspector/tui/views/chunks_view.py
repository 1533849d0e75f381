"""ChunksView: the chunk index (index.yaml) and pending evidence as a table, plus the selected
chunk's summary (split-turn part marked) and its events, read lazily.

Public API (for the app):

    view = ChunksView(id="chunks")
    view.manager: MemoryManager | None  # attach() sets it; used for lazy reads only
    view.set_data(entries: Sequence[ChunkEntry], pending: Sequence[PendingEvidence],
                  index_error: str | None = None, *, warnings: Sequence[str] = ()) -> None
        # Plain data in, loaded by the app (e.g. in its own worker). Indexed chunks show with
        # source "active", pending evidence with source "pending". index_error (the message of
        # an IndexCorruptError) is shown as a line above the table instead of a crash;
        # warnings (IndexRead.warnings, list_pending's) as yellow lines under it.
        # The cursor stays on the same chunk id when it is still there.
    view.reload() -> None
        # Convenience: reads index + pending through `manager.paths` in a thread worker and
        # applies them with set_data (IndexCorruptError becomes index_error).
    view.selected_chunk_id -> str | None

Selecting a row (cursor move) shows the summary at once and reads `<chunk_id>.jsonl` in a
thread worker (`read_chunk_events(manager.paths, id)`); pending rows already carry their
events. The same worker analyses the chunk (inspector.tui.chunk_analysis): the prompt before →
after the pass, the summary's compression, the runs and requests it covers, the paths it
edited, and the identifiers said or used in its events that the summary dropped; the table's
"tok before→after" column shows the first of these from the index alone. Enter on a row
moves focus to the detail pane; escape there goes back to the table (escape on the table
falls through to the app's own binding).

Messages posted (bubble): `ChunksView.ChunkHighlighted(chunk_id: str, source: str)`.
Styles: inspector/tui/styles/widgets/chunks_view.tcss. Every cell and text is a `rich.text.Text`
from inspector.safe_text.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.widgets import DataTable, Static
from textual.widgets.data_table import RowKey
from textual.worker import get_current_worker

from core.errors import SessionMemoryError
from core.index.chunk_files import read_chunk_events
from core.index.format import ChunkEntry, IndexRead
from core.index.pending import PendingEvidence, list_pending
from core.index.reader import read_index_head, read_index_shared
from core.text import compact_json, content_text
from core.tokens import estimate_tokens
from inspector.safe_text import one_line, safe_line, safe_text
from inspector.tui.chunk_analysis import ChunkAnalysis, analyze_chunk
from inspector.tui.source_compaction import side_by_side_text
from inspector.tui.tables import Column, Fitted, fit_columns, text_width
from inspector.tui.views.session_view import SessionView

SPLIT_MARKER = "Turn Context (split turn):"
SPLIT_SEPARATOR = "\n\n---\n\n"
MAX_EVENTS_SHOWN = 2000
SUMMARY_LIMIT = 20_000
PREVIEW_LIMIT = 300

SOURCE_STYLE = {"active": "bold green", "pending": "bold yellow"}

FIRST_PAGE = 120
"""Entries the worker puts on screen first, before the whole index is read (issue 14)."""
PAGE_WAIT_S = 1.0
"""At most this long the worker waits for the first page to be drawn before reading on."""
BATCH_ROWS = 1000
"""Rows added to the table per loop callback: a 10k-chunk table fills without freezing keys."""


@dataclass
class ChunkRow:
    """One table row: an indexed chunk or a pending evidence file, reduced to plain values."""

    chunk_id: str
    source: str
    event_count: int | None
    first_event_id: str | None
    last_event_id: str | None
    created_at: str | None
    is_split_turn: bool
    summary_backend: str | None
    cut_meta: dict[str, Any] | None
    summary: str
    events: list[dict[str, Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    analysis: ChunkAnalysis | None = None


def describe_error(exc: BaseException) -> str:
    """One line for an error raised in a worker: core's own errors already are one line; anything
    else (a bug, an unexpected OSError) gets its type so it is not mistaken for data."""
    if isinstance(exc, SessionMemoryError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _str_or_none(value: object) -> str | None:
    return None if value is None else str(value)


def row_from_entry(entry: ChunkEntry) -> ChunkRow:
    cut_meta = entry.cut_meta if isinstance(entry.cut_meta, dict) else None
    extra = entry.extra if isinstance(entry.extra, dict) else {}
    summary = entry.summary if isinstance(entry.summary, str) else content_text(entry.summary)
    return ChunkRow(
        chunk_id=str(entry.chunk_id),
        source="active",
        event_count=entry.event_count if isinstance(entry.event_count, int) else None,
        first_event_id=_str_or_none(entry.first_event_id),
        last_event_id=_str_or_none(entry.last_event_id),
        created_at=_str_or_none(entry.created_at),
        is_split_turn=bool(cut_meta and cut_meta.get("is_split_turn")) or SPLIT_MARKER in summary,
        summary_backend=_str_or_none(extra.get("summary_backend")),
        cut_meta=cut_meta,
        summary=summary,
        extra=extra,
    )


def row_from_pending(pending: PendingEvidence) -> ChunkRow:
    meta = pending.meta if isinstance(pending.meta, dict) else {}
    events = [e for e in pending.events if isinstance(e, dict)]
    raw_entry = meta.get("entry")
    entry: dict[str, Any] = raw_entry if isinstance(raw_entry, dict) else {}
    raw_cut = entry.get("cut_meta")
    cut_meta: dict[str, Any] | None = raw_cut if isinstance(raw_cut, dict) else None
    summary = meta.get("summary")
    return ChunkRow(
        chunk_id=str(pending.pending_id),
        source="pending",
        event_count=len(events),
        first_event_id=_str_or_none(events[0].get("id")) if events else None,
        last_event_id=_str_or_none(events[-1].get("id")) if events else None,
        created_at=_str_or_none(meta.get("created_at") or entry.get("created_at")),
        is_split_turn=bool(cut_meta and cut_meta.get("is_split_turn")),
        summary_backend=_str_or_none(entry.get("summary_backend")),
        cut_meta=cut_meta,
        summary=summary if isinstance(summary, str) else "",
        events=events,
        extra=meta,
    )


def summary_text(summary: str) -> Text:
    """The chunk summary with the split-turn part visibly marked (contract §5)."""
    summary = summary[:SUMMARY_LIMIT] + ("\u2026" if len(summary) > SUMMARY_LIMIT else "")
    at = summary.find(SPLIT_MARKER)
    if at < 0:
        return safe_text(summary) if summary else Text("(no summary)", style="dim italic")
    history = summary[:at]
    if history.endswith(SPLIT_SEPARATOR):
        history = history[: -len(SPLIT_SEPARATOR)]
    prefix = summary[at + len(SPLIT_MARKER) :].lstrip("\n")
    out = Text()
    out.append_text(safe_text(history) if history.strip() else Text("(no history)", "dim italic"))
    out.append("\n\n")
    out.append(" \u2702 split turn: turn context ", style="bold reverse yellow")
    out.append("\n")
    for line in prefix.splitlines() or [""]:
        out.append("\u2502 ", style="yellow")
        out.append_text(safe_text(line, "italic"))
        out.append("\n")
    out.rstrip()
    return out


def events_text(events: Sequence[dict[str, Any]], bad_lines: int = 0) -> Text:
    """One header line and one preview line per event, control characters visible."""
    out = Text()
    if bad_lines:
        out.append(f"{bad_lines} unreadable line(s) in the chunk file\n", style="bold red")
    for i, event in enumerate(events[:MAX_EVENTS_SHOWN]):
        out.append(f"{i:>4} ", style="dim")
        out.append_text(safe_line(event.get("type", "?"), "bold", limit=40))
        out.append(" ")
        out.append_text(safe_line(event.get("role", ""), "cyan", limit=20))
        if event.get("name") is not None:
            out.append(" ")
            out.append_text(safe_line(event.get("name"), "magenta", limit=40))
        ts = event.get("ts")
        if isinstance(ts, str) and len(ts) >= 19 and ts[10] == "T":
            out.append(f" {ts[11:19]}", style="dim")
        out.append("  ")
        out.append_text(safe_line(event.get("id", ""), "dim", limit=40))
        out.append("\n      ")
        content = event.get("content")
        if event.get("arguments") is not None and content is None:
            content = event.get("arguments")
        out.append(one_line(content_text(content), PREVIEW_LIMIT))
        out.append("\n")
    if len(events) > MAX_EVENTS_SHOWN:
        out.append(f"\u2026 {len(events) - MAX_EVENTS_SHOWN} more events not shown\n", "dim")
    if not events and not bad_lines:
        out.append("(no events)", style="dim italic")
    out.rstrip()
    return out


def _short_id(value: object, keep: int = 10) -> str:
    text = one_line(str(value), 200)
    return text if len(text) <= keep + 1 else text[:keep] + "…"


def _count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "?"


def cut_meta_summary(cut_meta: dict[str, Any] | None, path: object = None) -> str:
    """cut_meta in a few words for the table, e.g. "token · from ev_0008" (the path, the first
    kept event; tokens and split turns have their own columns); "" when there is none."""
    parts: list[str] = []
    if isinstance(path, str) and path:
        parts.append(one_line(path, 12))
    if cut_meta and cut_meta.get("first_kept_event_id") is not None:
        parts.append(f"from {_short_id(cut_meta['first_kept_event_id'], 8)}")
    return " · ".join(parts)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def tokens_after(row: ChunkRow) -> int | None:
    """The prompt after the pass: the hot window it kept plus the chunk summary's estimate."""
    kept = _int((row.cut_meta or {}).get("kept_tokens_estimate"))
    return None if kept is None else kept + estimate_tokens(row.summary)


def tokens_before_after(row: ChunkRow) -> str:
    """ "3,400→1,380": the prompt before the pass (cut_meta tokens_before) → after it (the kept
    hot window + this chunk's summary); "?" for what is not recorded."""
    before = _int((row.cut_meta or {}).get("tokens_before"))
    after = tokens_after(row)
    if before is None and after is None:
        return ""
    return f"{_count(before)}→{_count(after)}"


def turn_start_text(row: ChunkRow) -> str:
    """A split turn's start for the detail pane (issue 22 item 2): its user_input's id and
    where that input is — this chunk, an earlier chunk (a turn several passes cut inside), or
    the hot window (the pinned root)."""
    meta = row.cut_meta or {}
    start = str(meta.get("turn_start_event_id"))
    held = row.extra.get("turn_start_chunk_id")
    if held == row.chunk_id:
        return f"{start} (its request is in this chunk)"
    if isinstance(held, str) and held:
        return f"{start} (its request is in chunk {held}; this chunk continues that turn)"
    if "turn_start_chunk_id" in row.extra:  # null: the pinned root was the turn's input
        return f"{start} (the pinned root: its request stays in the hot window)"
    return start  # an entry written before 2026-12-01 does not say


def grew_the_prompt(row: ChunkRow) -> bool:
    """Whether the pass that made this chunk left a bigger prompt than it found (issue 22
    item 3; by the estimates its cut_meta records)."""
    before = _int((row.cut_meta or {}).get("tokens_before"))
    after = tokens_after(row)
    return before is not None and after is not None and after >= before


def cut_meta_detail(row: ChunkRow) -> Text:
    """Every cut_meta field (and how the chunk was made) spelled out, for the detail pane."""
    meta = row.cut_meta or {}
    out = Text()

    def line(label: str, value: str) -> None:
        out.append(f"{label:<12}", style="dim")
        out.append_text(safe_line(value, limit=200))
        out.append("\n")

    path = row.extra.get("path")
    how = [
        f"{one_line(str(path), 20)} path" if path else "",
        "split turn" if row.is_split_turn else "",
    ]
    line("cut", " · ".join(h for h in how if h) or "(not recorded)")
    if meta.get("turn_start_event_id") is not None:
        line("turn start", turn_start_text(row))
    if meta.get("first_kept_event_id") is not None:
        line("first kept", str(meta["first_kept_event_id"]))
    if "tokens_before" in meta or "kept_tokens_estimate" in meta:
        line(
            "tokens",
            f"{_count(meta.get('tokens_before'))} before → "
            f"{_count(meta.get('kept_tokens_estimate'))} kept (estimates)",
        )
    line("events", "?" if row.event_count is None else f"{row.event_count:,}")
    line("first event", row.first_event_id or "?")
    line("last event", row.last_event_id or "?")
    line("backend", row.summary_backend or "?")
    line("created", _created(row.created_at) or "?")
    known = {
        "first_kept_event_id",
        "tokens_before",
        "kept_tokens_estimate",
        "is_split_turn",
        "turn_start_event_id",
    }
    for key in sorted(k for k in meta if k not in known)[:10]:
        line(one_line(str(key), 11), compact_json(meta[key]))
    return out


def _created(value: str | None) -> str:
    """2026-11-29T19:24:16.023Z as 2026-11-29 19:24:16 (anything else as it is)."""
    if value and len(value) >= 19 and value[10] in "Tt":
        return value[:10] + " " + value[11:19]
    return value or ""


LISTED = 12


def _listed(out: Text, label: str, items: Sequence[str], total: int, style: str) -> None:
    out.append(f"{label:<12}", style="dim")
    if not items:
        out.append("none\n", style="dim")
        return
    for i, item in enumerate(items[:LISTED]):
        if i:
            out.append(", ", style="dim")
        out.append_text(safe_line(item, style, limit=80))
    if total > LISTED:
        out.append(f" (+{total - LISTED} more)", style="dim")
    out.append("\n")


def analysis_text(row: ChunkRow, analysis: ChunkAnalysis) -> Text:
    """What the summary made of the chunk: tokens before → after, the runs it covers and their
    requests, the paths it edited, the said/used identifiers the summary dropped."""
    out = Text()
    out.append(f"{'prompt':<12}", style="dim")
    after = tokens_after(row)
    out.append(f"{_count(analysis.tokens_before)} → {_count(after)} tok", style="bold")
    if analysis.kept_tokens is not None:
        out.append(
            f" (hot window {analysis.kept_tokens:,} + summary {analysis.summary_tokens:,})",
            style="dim",
        )
    out.append("\n")
    out.append(f"{'compression':<12}", style="dim")
    out.append(
        f"events {analysis.events_tokens:,} tok → summary {analysis.summary_tokens:,} tok",
        style="bold",
    )
    if analysis.ratio is not None:
        out.append(f" ({analysis.ratio:,.1f}× smaller)", style="dim")
    out.append("\n")
    runs = analysis.runs
    out.append(f"{'runs':<12}", style="dim")
    out.append(f"{len(runs)}\n")
    for run in runs[:LISTED]:
        out.append("  \u25b8 ", style="cyan")
        if run.continued and not run.request:
            out.append("(continued from an earlier chunk)", style="dim italic")
        else:
            if run.continued:
                out.append("(continued) ", style="dim")
            out.append_text(safe_line(run.request or "(no request text)", limit=100))
        if run.error:
            out.append("  \u2717 ", style="bold red")
            out.append_text(safe_line(run.error, "red", limit=60))
        out.append("\n")
    if len(runs) > LISTED:
        out.append(f"  \u2026 {len(runs) - LISTED} more runs\n", style="dim")
    _listed(out, "edited", analysis.edited, len(analysis.edited), "green")
    out.append(f"{'dropped':<12}", style="dim")
    if analysis.identifiers == 0:
        out.append("no identifiers said or used\n", style="dim")
    else:
        share = analysis.kept_share or 0.0
        style = "bold green" if not analysis.dropped_count else "bold yellow"
        out.append(
            f"{analysis.dropped_count} of {analysis.identifiers} said/used identifiers "
            f"not named in the summary ({share:.0%} kept)",
            style=style,
        )
        out.append("\n")
        if analysis.dropped:
            _listed(out, "", analysis.dropped, analysis.dropped_count, "yellow")
    theirs = side_by_side_text(row.events or [], row.summary)  # the agent's own (issue 23)
    if theirs is not None:
        out.append_text(theirs)
    out.rstrip()
    return out


def row_cells(row: ChunkRow) -> list[Text]:
    """The table's cells for one row (plain Text; safe to build in a worker)."""
    return [
        safe_line(row.chunk_id, "bold", limit=32),
        Text(row.source, style=SOURCE_STYLE.get(row.source, "")),
        Text("?" if row.event_count is None else str(row.event_count), justify="right"),
        Text("split", style="bold yellow") if row.is_split_turn else Text(""),
        Text(
            tokens_before_after(row),
            justify="right",
            style="bold red" if grew_the_prompt(row) else "",
        ),
        safe_line(cut_meta_summary(row.cut_meta, row.extra.get("path")), "dim", limit=60),
        safe_line(row.summary_backend or "", limit=24),
        safe_line(_created(row.created_at)[:16], limit=24),
        safe_line(row.first_event_id or "", limit=24),
        safe_line(row.last_event_id or "", limit=24),
    ]


class FixedWidthTable(DataTable[Text]):
    """A DataTable whose columns all get fixed widths measured off the loop (`prepare`).
    `home` / `end` go to the first / last row (the oldest / newest chunk), not sideways.
    DataTable measures every new cell on idle even for fixed-width columns (~2 s for 10k
    chunk rows, freezing keys); with no auto-width column, no row label and one-line rows
    that measuring changes nothing, so it is skipped and only the scrollable size updated."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first_row", "First chunk", show=False, id="chunks.first"),
        Binding("end", "last_row", "Newest chunk", show=False, id="chunks.last"),
    ]

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        """The newest chunk: the last row, also while a long index is still being filled
        (the view moves there again once every row is in)."""
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)
        self.post_message(self.WantsLast())

    class WantsLast(Message):
        """`end` was pressed: the last row is wanted even if more rows are still to come."""

    drawn: threading.Event | None = None
    """Set (then dropped) the first time a row line is rendered: the view's worker waits for
    it before a long read that would compete with drawing for the GIL."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        drawn = self.drawn
        header = self.header_height if self.show_header else 0
        if drawn is not None and y >= header and self.row_count:
            self.drawn = None
            drawn.set()
        return strip

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        new_rows = list(new_rows)
        columns = self.ordered_columns
        if (
            not columns
            or self._labelled_row_exists
            or any(column.auto_width for column in columns)
            or any(self.rows[key].auto_height for key in new_rows if key in self.rows)
        ):
            super()._update_dimensions(new_rows)
            return
        width = sum(column.get_render_width(self) for column in self.columns.values())
        header = self.header_height if self.show_header else 0
        self.virtual_size = Size(
            width + self._row_label_column_width, self._total_row_height + header
        )


@dataclass
class _Prepared:
    """Everything the table needs, built off the loop: rows, their keys and cells, column
    widths (fixed before any row is painted, see inspector.tui.tables) and the notice line."""

    rows: list[ChunkRow]
    keys: list[str]
    cells: list[list[Text]]
    widths: list[int]
    """The widest cell of each column (labels not counted: a narrow table may shorten them)."""
    notice: Text


def prepare(
    entries: Sequence[ChunkEntry],
    pending: Sequence[PendingEvidence],
    index_error: str | None,
    warnings: Sequence[str],
) -> _Prepared:
    """Rows, cells and widths for these entries and pending files, and the notice above."""
    notice = Text()
    if index_error:
        notice.append_text(
            safe_text(f"chunk index unreadable: {index_error}", "bold red", limit=500)
        )
    for warning in list(warnings)[:3]:
        if notice:
            notice.append("\n")
        notice.append_text(safe_line(f"warning: {warning}", "yellow", limit=300))
    if len(warnings) > 3:
        notice.append(f"\n… {len(warnings) - 3} more warnings", style="yellow")
    rows = [row_from_entry(e) for e in entries] + [row_from_pending(p) for p in pending]
    keys = [f"{row.source[0]}{i}" for i, row in enumerate(rows)]
    cells = [row_cells(row) for row in rows]
    widths = [0] * len(CHUNK_COLUMNS)
    for row_cells_ in cells:
        for i, cell in enumerate(row_cells_):
            width = cell.cell_len if "\n" not in cell.plain else text_width(cell)
            if width > widths[i]:
                widths[i] = width
    return _Prepared(rows, keys, cells, widths, notice)


CHUNK_COLUMNS: tuple[Column, ...] = (
    Column("chunk_id", "chunk id"),
    Column("source", "source", short="src"),
    Column("events", "events", short="ev"),
    Column("split", "split"),
    Column("tokens", "tok before→after", short="tok b→a"),
    Column("cut", "cut", min_width=12),
    Column("backend", "backend"),
    Column("created", "created"),
    Column("first_id", "first id"),
    Column("last_id", "last id"),
)
"""The table's columns, most telling first."""

NARROW_MOVES: tuple[tuple[str, str], ...] = (
    ("drop", "last_id"),
    ("drop", "first_id"),
    ("drop", "created"),
    ("drop", "backend"),
    ("short", "tokens"),
    ("drop", "cut"),
    ("short", "events"),
    ("short", "source"),
    ("drop", "split"),
)
"""How a narrow table makes room (see inspector.tui.tables.fit_columns): at 80 columns chunk id
… cut stay whole, at 60 the cut goes; the detail pane below shows every field anyway."""


LAST = "\x00last"
"""`ChunksView.select_chunk`'s name for the newest chunk (no chunk id can be it)."""


class ChunksView(SessionView):
    """index.yaml + pending evidence as a table; summary and lazily read events below it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "focus_table", "Back to table", show=False, id="chunks.back"),
    ]

    COLUMNS = tuple(column.label for column in CHUNK_COLUMNS)
    TABLE = "#chunks-table"

    @dataclass(eq=False)
    class ChunkHighlighted(Message):
        """The cursor moved onto a chunk (or pending evidence) row."""

        chunk_id: str
        source: str

    @dataclass(eq=False)
    class _EventsLoaded(Message):
        """A chunk's events read for the detail pane (or why they could not be)."""

        key: str
        events: list[dict[str, Any]]
        bad_lines: int
        error: str | None
        analysis: ChunkAnalysis | None = None

    @dataclass(eq=False)
    class _DataLoaded(Message):
        """Rows for the table: the first screenful, then (`final`) all of them."""

        prepared: _Prepared
        final: bool
        drawn: threading.Event | None = None
        """Set once the rows were drawn (the worker waits for it before reading on)."""

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._rows: dict[str, ChunkRow] = {}
        self._selected_key: str | None = None
        self._fill_generation = 0
        self._reload_guard = threading.Lock()
        self._reload_running = False
        self._reload_again = False
        self._prepared: _Prepared | None = None
        self._fitted: Fitted | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="chunks-error", markup=False)
        yield FixedWidthTable(id="chunks-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="chunks-detail", can_focus=True):
            yield Static(
                Text("Select a chunk to see its summary and events.", style="dim"),
                id="chunks-summary",
                markup=False,
            )
            yield Static(Text(""), id="chunks-analysis", markup=False)
            yield Static(Text(""), id="chunks-events", markup=False)

    def on_mount(self) -> None:
        table: DataTable[Text] = self.query_one("#chunks-table", DataTable)
        for column in CHUNK_COLUMNS:
            table.add_column(column.label, key=column.key)

    def _fit(self, prepared: _Prepared) -> Fitted:
        """The columns that fit the view's width now (all of them on a wide screen)."""
        width = self.size.width or self.app.size.width
        return fit_columns(CHUNK_COLUMNS, prepared.widths, width - 2, NARROW_MOVES)

    def on_resize(self) -> None:
        """A width that shows other columns puts the same rows back with those columns."""
        prepared = self._prepared
        if prepared is not None and self._fit(prepared) != self._fitted:
            self._apply(prepared)

    @property
    def selected_chunk_id(self) -> str | None:
        row = self._rows.get(self._selected_key or "")
        return row.chunk_id if row else None

    def set_data(
        self,
        entries: Sequence[ChunkEntry],
        pending: Sequence[PendingEvidence],
        index_error: str | None = None,
        *,
        warnings: Sequence[str] = (),
    ) -> None:
        """Show these chunks and pending files (replacing what was shown)."""
        self._apply(prepare(entries, pending, index_error, warnings))

    def _apply(self, prepared: _Prepared) -> None:
        """Put prepared rows on screen: the first BATCH_ROWS now, the rest in later callbacks
        (a 10k-chunk table never holds the loop for long)."""
        table: DataTable[Text] = self.query_one("#chunks-table", DataTable)
        previous = self.selected_chunk_id
        error = self.query_one("#chunks-error", Static)
        error.update(prepared.notice)
        self.set_class(bool(prepared.notice), "-index-error")

        rows = prepared.rows
        self._rows = dict(zip(prepared.keys, rows, strict=True))
        select_at = 0
        if previous is not None:
            for i, row in enumerate(rows):
                if row.chunk_id == previous:
                    select_at = i
                    break
        self._fill_generation += 1
        generation = self._fill_generation
        self._prepared = prepared
        fitted = self._fitted = self._fit(prepared)
        shown = fitted.indices
        table.clear(columns=True)
        for i, label, width in fitted.columns:
            table.add_column(label, key=CHUNK_COLUMNS[i].key, width=width)
        if len(shown) == len(CHUNK_COLUMNS):
            items = list(zip(prepared.keys, prepared.cells, strict=True))
        else:
            items = [
                (key, [cells[i] for i in shown])
                for key, cells in zip(prepared.keys, prepared.cells, strict=True)
            ]

        def select() -> None:
            table.move_cursor(row=select_at)
            if previous is None or rows[select_at].chunk_id != previous:
                self._show_row(prepared.keys[select_at])

        def fill(start: int) -> None:
            if generation != self._fill_generation or not self.is_attached:
                return  # newer data arrived; this fill is stale
            for key, cells in items[start : start + BATCH_ROWS]:
                table.add_row(*cells, key=key)
            end = start + BATCH_ROWS
            if start <= select_at < end:
                select()
            if end < len(items):
                self.call_later(fill, end)
            else:
                self._filled(table)

        if rows:
            fill(0)
        else:
            self._selected_key = None
            self._detail(Text("No chunks yet: nothing has been compacted.", style="dim"), Text(""))

    _wanted: str | None = None
    """A chunk id (or `LAST`) to select once its row is in the table."""

    def _filled(self, table: DataTable[Text]) -> None:
        wanted, self._wanted = self._wanted, None
        if wanted is not None:
            self.select_chunk(wanted)

    @on(FixedWidthTable.WantsLast)
    def _on_wants_last(self, message: FixedWidthTable.WantsLast) -> None:
        message.stop()
        table = self.query_one("#chunks-table", DataTable)
        prepared = self._prepared
        if prepared is not None and table.row_count < len(prepared.rows):
            self._wanted = LAST

    def select_chunk(self, chunk_id: str) -> bool:
        """Put the cursor on a chunk's row (`LAST`: the newest), now or once its row is in;
        whether the chunk is known."""
        prepared = self._prepared
        if prepared is None:
            self._wanted = chunk_id
            return False
        if chunk_id == LAST:
            at = len(prepared.rows) - 1
        else:
            at = next((i for i, r in enumerate(prepared.rows) if r.chunk_id == chunk_id), -1)
        if at < 0:
            self._wanted = chunk_id  # perhaps in the next read of the index
            return False
        table = self.query_one("#chunks-table", DataTable)
        if at < table.row_count:
            table.move_cursor(row=at)
            self._show_row(prepared.keys[at])
        else:
            self._wanted = chunk_id
        return True

    def reload(self) -> None:
        """Read index + pending through `manager.paths` in a thread worker. A reload asked for
        while one runs is done once after it, never by cancelling it: on a busy root a stream
        of changes would otherwise keep restarting a 10k-chunk read that never lands."""
        if self.manager is None:
            return
        with self._reload_guard:
            if self._reload_running:
                self._reload_again = True
                return
            self._reload_running = True
        self._reload_worker()

    @work(thread=True, group="chunks-reload")
    def _reload_worker(self) -> None:
        try:
            while True:
                self._reload_once()
                with self._reload_guard:
                    if not self._reload_again or get_current_worker().is_cancelled:
                        self._reload_running = False
                        return
                    self._reload_again = False
        except BaseException:
            with self._reload_guard:
                self._reload_running = False
            raise

    def _reload_once(self) -> None:
        """A first page of the index on screen at once, then the whole index and pending."""
        manager = self.manager
        if manager is None:
            return
        worker = get_current_worker()
        entries: list[ChunkEntry] = []
        error: str | None = None
        pending: list[PendingEvidence] = []
        warnings: list[str] = []
        read: IndexRead | None = None
        try:
            head = read_index_head(manager.paths, FIRST_PAGE)
            if head is None:  # cached (or not the emitter's shape): the whole read is at hand
                read = read_index_shared(manager.paths)
                head = read.entries[:FIRST_PAGE]
        except Exception:  # the full read below reports it
            head = None
        small = read is not None and len(read.entries) <= FIRST_PAGE
        if head and not small and not worker.is_cancelled:
            drawn = threading.Event()
            self.post_message(self._DataLoaded(prepare(head, [], None, ()), False, drawn))
            # The rest of the read competes for the GIL: let the first page reach the screen.
            drawn.wait(timeout=PAGE_WAIT_S)
        try:
            read = read or read_index_shared(manager.paths)
            entries = list(read.entries)
            warnings.extend(read.warnings)
        except Exception as exc:  # IndexCorruptError above all; never crash the UI
            error = describe_error(exc)
        try:
            pending = list_pending(manager.paths, warnings)
        except Exception as exc:
            error = f"{error}; {describe_error(exc)}" if error else describe_error(exc)
        if not worker.is_cancelled:
            prepared = prepare(entries, pending, error, warnings)
            if not worker.is_cancelled:
                self.post_message(self._DataLoaded(prepared, True))

    @on(_DataLoaded)
    def _on_data_loaded(self, message: _DataLoaded) -> None:
        message.stop()
        if message.drawn is not None:
            self.query_one("#chunks-table", FixedWidthTable).drawn = message.drawn
        self._apply(message.prepared)

    @on(DataTable.RowHighlighted, "#chunks-table")
    def _on_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = event.row_key.value
        if key is not None and key != self._selected_key:
            self._show_row(key)

    @on(DataTable.RowSelected, "#chunks-table")
    def _on_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.query_one("#chunks-detail").focus()

    def _detail(self, summary: Text, events: Text, analysis: Text | None = None) -> None:
        self.query_one("#chunks-summary", Static).update(summary)
        self.query_one("#chunks-analysis", Static).update(
            analysis if analysis is not None else Text("")
        )
        self.query_one("#chunks-events", Static).update(events)

    def _show_row(self, key: str | None) -> None:
        row = self._rows.get(key or "")
        self._selected_key = key
        if row is None:
            return
        header = Text()
        header.append_text(safe_line(row.chunk_id, "bold", limit=120))
        header.append("  ")
        header.append(row.source, style=SOURCE_STYLE.get(row.source, ""))
        header.append("\n")
        header.append_text(cut_meta_detail(row))
        header.append("\n")
        header.append_text(summary_text(row.summary))
        waiting = Text("analysing what the summary kept\u2026", style="dim italic")
        if row.events is not None:
            analysis = analysis_text(row, row.analysis) if row.analysis else waiting
            self._detail(header, events_text(row.events), analysis)
            if row.analysis is None:
                self._load_events(key or "", row.chunk_id, row.events, row.summary, row.cut_meta)
        elif self.manager is None:
            self._detail(header, Text("(events not loaded: no session attached)", "dim"))
        else:
            self._detail(header, Text("reading events\u2026", style="dim italic"), waiting)
            self._load_events(key or "", row.chunk_id, None, row.summary, row.cut_meta)
        self.post_message(self.ChunkHighlighted(row.chunk_id, row.source))

    @work(thread=True, exclusive=True, group="chunks-events")
    def _load_events(
        self,
        key: str,
        chunk_id: str,
        events: list[dict[str, Any]] | None,
        summary: str,
        cut_meta: dict[str, Any] | None,
    ) -> None:
        """Read the chunk file (unless the events are at hand) and analyse it, off the loop."""
        manager = self.manager
        try:
            bad_lines = 0
            if events is None:
                if manager is None:
                    return
                read, bad = read_chunk_events(manager.paths, chunk_id)
                events, bad_lines = list(read), len(bad)
            analysis = analyze_chunk(events, summary, cut_meta)
            result = self._EventsLoaded(key, events, bad_lines, None, analysis)
        except Exception as exc:
            result = self._EventsLoaded(key, [], 0, describe_error(exc))
        self.post_result(result)

    @on(_EventsLoaded)
    def _on_events_loaded(self, message: _EventsLoaded) -> None:
        message.stop()
        if message.key != self._selected_key:
            return
        row = self._rows.get(message.key)
        if row is not None and message.error is None:
            row.events = message.events
            row.analysis = message.analysis
        analysis = self.query_one("#chunks-analysis", Static)
        if message.error is not None:
            shown = safe_text(message.error, "bold red", limit=500)
            analysis.update(Text(""))
        else:
            shown = events_text(message.events, message.bad_lines)
            if row is not None and message.analysis is not None:
                analysis.update(analysis_text(row, message.analysis))
        self.query_one("#chunks-events", Static).update(shown)
