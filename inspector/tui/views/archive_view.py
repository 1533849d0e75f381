"""ArchiveView: the closed sessions under `M/session_archive/` with sizes and dates, and an
"open" action the app turns into a read-only view of that session.

Public API (for the app):

    view = ArchiveView(id="archive")
    view.manager: MemoryManager | None  # attach() sets it; used by reload() only
    view.set_data(archives: Sequence[ArchiveInfo], error: str | None = None) -> None
        # Plain data in (MemoryManager.list_archives() or SessionStatus.archives).
    view.reload() -> None                    # list_archives_light() in a thread worker
    view.selected_archive -> ArchiveInfo | None
    view.action_open() -> None               # posts OpenArchive for the cursor row

The filter box above the table keeps the rows whose id, date or first request contain its text
(case-insensitive); t cycles the sort (newest first, oldest first, largest, most events, most
chunks). Each row shows the session's first request, read from its events.jsonl in the worker.
The listing comes from inspector.tui.archive_list: cheap per-session reads, cached per archived
session by its files' stats, so 100 closed sessions list in milliseconds once seen.

Keys: enter or o on a row opens it; t sorts; f or ctrl+f focuses the filter. Message posted
(bubbles): `ArchiveView.OpenArchive(session_id: str, path: Path)` — handle it in the app with
`on_archive_view_open_archive`. Archived sessions are logs only: never loaded into prompts
or compacted, and recalled only when Recall searches all sessions; the note above the table
says so.
Styles: inspector/tui/styles/widgets/archive_view.tcss.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from core.manager import MemoryManager
from core.status import ArchiveInfo
from inspector.safe_text import safe_line
from inspector.tui.archive_list import first_request, list_archives_light
from inspector.tui.tables import Column, Fitted, fit_columns, text_width
from inspector.tui.views.chunks_view import describe_error
from inspector.tui.views.session_view import SessionView


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def _when(value: str | None) -> str:
    """2026-01-01T10:00:00.000Z as 2026-01-01 10:00:00 (anything else as it is)."""
    if value and len(value) >= 19 and value[10] in "Tt" and value[:4].isdigit():
        return value[:10] + " " + value[11:19]
    return value or ""


SORTS: tuple[tuple[str, Callable[[ArchiveInfo], object], bool], ...] = (
    ("newest first", lambda a: a.created_at or "", True),
    ("oldest first", lambda a: a.created_at or "", False),
    ("largest first", lambda a: a.size_bytes, True),
    ("most events first", lambda a: a.event_count, True),
    ("most chunks first", lambda a: a.chunk_count, True),
)
"""(label, key, descending) of the sort orders t cycles through."""


ARCHIVE_COLUMNS: tuple[Column, ...] = (
    Column("session_id", "session id"),
    Column("created", "created"),
    Column("size", "size"),
    Column("events", "events", short="ev"),
    Column("chunks", "chunks", short="ch"),
    Column("request", "first request", short="request", min_width=12),
)
"""The table's columns; the first request shrinks (ending in an ellipsis) before any goes."""

NARROW_MOVES: tuple[tuple[str, str], ...] = (
    ("drop", "created"),
    ("short", "request"),
    ("short", "events"),
    ("short", "chunks"),
    ("drop", "chunks"),
    ("drop", "size"),
    ("drop", "events"),
)
"""How a narrow table makes room (inspector.tui.tables.fit_columns): the creation date goes first
(the session id holds it: s-YYYYMMDDTHHMMSSZ-…), then the counts; the id and the first
request stay."""


class ArchiveView(SessionView):
    """Closed sessions, newest first; a filter box and sort orders; enter opens one read-only."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "open", "Open", id="archive.open"),
        Binding("t", "sort", "Sort", show=False, id="archive.sort"),
        Binding("f,ctrl+f", "focus_filter", "Filter", show=False, id="archive.filter"),
    ]

    @dataclass(eq=False)
    class OpenArchive(Message):
        """The person asked to open a closed session (read-only)."""

        session_id: str
        path: Path

    @dataclass(eq=False)
    class _Loaded(Message):
        """The archives listed by the reload worker (or why they could not be)."""

        archives: list[ArchiveInfo]
        error: str | None
        requests: dict[str, str] = field(default_factory=dict)
        """Session id -> its first request, for the list's preview column."""

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._all: list[ArchiveInfo] = []
        self._archives: list[ArchiveInfo] = []
        self._error: str | None = None
        self.requests: dict[str, str] = {}
        self.sort_index = 0
        self._fitted: Fitted | None = None
        self._widths: list[int] = [0] * len(ARCHIVE_COLUMNS)

    def compose(self) -> ComposeResult:
        yield Static(
            Text(
                "Closed sessions: read-only, never loaded into prompts or compacted; recalled "
                "only with Recall's all sessions (source archived). "
                "enter / o: open read-only · f: filter · t: sort"
            ),
            id="archive-note",
        )
        yield Input(placeholder="filter: id, date or request", id="archive-filter", compact=True)
        yield Static(Text(""), id="archive-error", markup=False)
        table: DataTable[Text] = DataTable(
            id="archive-table", cursor_type="row", zebra_stripes=True
        )
        yield table

    def on_mount(self) -> None:
        table: DataTable[Text] = self.query_one("#archive-table", DataTable)
        for column in ARCHIVE_COLUMNS:
            table.add_column(column.label, key=column.key)

    def _fit(self, widths: Sequence[int]) -> Fitted:
        """The columns that fit the view's width now (all of them on a wide screen)."""
        width = self.size.width or self.app.size.width
        return fit_columns(ARCHIVE_COLUMNS, widths, width - 2, NARROW_MOVES)

    def on_resize(self) -> None:
        """A width that shows other columns lists the same rows again with those columns."""
        if self._fitted is not None and self._fit(self._widths) != self._fitted:
            self._show()

    @property
    def selected_archive(self) -> ArchiveInfo | None:
        table: DataTable[Text] = self.query_one("#archive-table", DataTable)
        row = table.cursor_row
        return self._archives[row] if 0 <= row < len(self._archives) else None

    def set_data(
        self,
        archives: Sequence[ArchiveInfo],
        error: str | None = None,
        requests: dict[str, str] | None = None,
    ) -> None:
        """Show these archives (replacing what was shown); error as a line above the table;
        requests: session id -> its first request."""
        self._all = list(archives)
        self._error = error
        if requests is not None:
            self.requests = dict(requests)
        self._show()

    @property
    def sort_label(self) -> str:
        return SORTS[self.sort_index][0]

    def _visible(self) -> list[ArchiveInfo]:
        needle = self.query_one("#archive-filter", Input).value.strip().lower()
        shown = [
            info
            for info in self._all
            if not needle
            or needle in info.session_id.lower()
            or needle in _when(info.created_at).lower()
            or needle in self.requests.get(info.session_id, "").lower()
        ]
        _, key, descending = SORTS[self.sort_index]
        return sorted(shown, key=key, reverse=descending)  # type: ignore[arg-type]

    def _show(self) -> None:
        table: DataTable[Text] = self.query_one("#archive-table", DataTable)
        previous = self.selected_archive
        self._archives = self._visible()
        select_at = 0
        rows: list[tuple[str, list[Text]]] = []
        for i, info in enumerate(self._archives):
            if previous is not None and info.session_id == previous.session_id:
                select_at = i
            cells = [
                safe_line(info.session_id, "bold", limit=40),
                safe_line(_when(info.created_at), limit=24),
                Text(human_size(info.size_bytes), justify="right"),
                Text(str(info.event_count), justify="right"),
                Text(str(info.chunk_count), justify="right"),
                safe_line(self.requests.get(info.session_id, ""), limit=60),
            ]
            rows.append((str(i), cells))
        widths = [0] * len(ARCHIVE_COLUMNS)
        for _, cells in rows:
            for i, cell in enumerate(cells):
                widths[i] = max(widths[i], text_width(cell))
        self._widths = widths
        fitted = self._fitted = self._fit(widths)
        table.clear(columns=True)
        for i, label, width in fitted.columns:
            table.add_column(label, key=ARCHIVE_COLUMNS[i].key, width=width)
        for key, cells in rows:
            table.add_row(*(cells[i] for i in fitted.indices), key=key)
        if self._archives:
            table.move_cursor(row=select_at)
        notice = self.query_one("#archive-error", Static)
        error = self._error
        if error:
            notice.update(safe_line(f"cannot list archives: {error}", limit=300))
        elif not self._all:
            notice.update(Text("No closed sessions yet."))
        elif not self._archives:
            notice.update(Text(f"No closed session matches the filter ({len(self._all)} in all)."))
        else:
            notice.update(
                Text(
                    f"{len(self._archives)} of {len(self._all)} closed sessions · "
                    f"sorted {self.sort_label} (t changes)"
                )
            )
        self.set_class(bool(error) or not self._archives, "-error")
        self.set_class(bool(self._all), "-listed")

    @on(Input.Changed, "#archive-filter")
    def _on_filter(self, event: Input.Changed) -> None:
        event.stop()
        self._show()

    @on(Input.Submitted, "#archive-filter")
    def _on_filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one("#archive-table").focus()

    def action_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(SORTS)
        self._show()

    def action_focus_filter(self) -> None:
        self.query_one("#archive-filter", Input).focus()

    @work(thread=True, exclusive=True, group="archive-reload")
    def _read(self, manager: MemoryManager) -> None:
        """List the archives through the manager."""
        try:
            listed = list_archives_light(manager)
            archives = [light.info for light in listed]
            requests = {light.info.session_id: light.first_request for light in listed}
            loaded = self._Loaded(archives, None, requests)
        except Exception as exc:
            loaded = self._Loaded([], describe_error(exc))
        self.post_result(loaded)

    @on(_Loaded)
    def _on_loaded(self, message: _Loaded) -> None:
        message.stop()
        self.set_data(message.archives, message.error, message.requests)

    @on(DataTable.RowSelected, "#archive-table")
    def _on_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        info = self.selected_archive
        if info is not None:
            self.post_message(self.OpenArchive(info.session_id, Path(info.path)))


__all__ = ["SORTS", "ArchiveView", "first_request", "human_size"]
