"""The hot window as a virtual list: one line per event of events.jsonl, drawn with the Line API.

A 100k-row DataTable takes seconds to become usable; this `ScrollView` only renders the rows on
screen (`render_line`), straight from a `HotWindowSnapshot`, with every cell capped. Untrusted
text (ids, types, previews) goes into plain `Segment`s: it is never parsed as markup and carries
no `@click` meta, so nothing in an event can run an action when clicked.

Columns: marks, index, id, time, type, role, cut class, tokens, cumulative tokens from the
newest, tool call/result link, preview. Marks: `R` pinned root (its preview starts "root ·"),
`S` synthetic split-turn event ("split turn ·"), `!` corrupt line; with the cut preview on, `×`
would be compacted (dimmed), `+` leading context pulled into the hot window, `^` the turn start
of a split turn, and a cut line above the row the new hot window would open at.

Every cell is padded to its column's width in terminal cells (`rich.cells`, so CJK text counts
two), and every row is exactly the widget's width: columns line up in every state.

Messages: `HotWindow.RowHighlighted(row)` when the cursor moves, `HotWindow.FollowChanged`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from core.compaction.planner import CompactionPlan
from core.events import CutClass
from inspector.safe_text import one_line
from inspector.tui.hot_window_model import (
    EMPTY_SNAPSHOT,
    CutPreview,
    HotWindowSnapshot,
    LazyRows,
    Row,
)

_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d")

CLASS_LABEL = {CutClass.BOUNDARY: "bound", CutClass.SPLIT: "split", CutClass.FORBIDDEN: "forbid"}


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    width: int
    align_right: bool = False


_INDEX = -1
"""A width in `_LAYOUTS`: the row number's digits (`columns_for`'s `index_width`)."""
_LAYOUTS: tuple[tuple[str, str, bool, tuple[int | None, int | None, int | None]], ...] = (
    # key, title, right-aligned, (width from 110 cells, from 80, under 80; None: not shown).
    # Narrow (60×20) drops columns by priority, so the preview stays readable.
    ("mark", "", False, (2, 2, 2)),
    ("index", "#", True, (_INDEX, _INDEX, _INDEX)),
    ("id", "id", False, (14, 8, None)),
    ("time", "time", False, (8, None, None)),
    ("type", "type", False, (16, 12, 12)),
    ("role", "role", False, (9, None, None)),
    ("class", "class", False, (6, 6, 6)),
    ("tokens", "tok", True, (6, 5, 5)),
    ("cum", "cum", True, (8, 7, None)),
    ("link", "pair", False, (7, 6, None)),
)


def columns_for(width: int, index_width: int) -> list[Column]:
    """Columns that fit `width`; the preview takes what is left (at least 8 cells)."""
    layout = 0 if width >= 110 else 1 if width >= 80 else 2
    cols = [
        Column(key, title, index_width if size == _INDEX else size, right)
        for key, title, right, widths in _LAYOUTS
        if (size := widths[layout]) is not None
    ]
    used = sum(c.width + 1 for c in cols)
    cols.append(Column("preview", "preview", max(8, width - used)))
    return cols


def _fit(text: str, width: int, right: bool = False) -> str:
    if cell_len(text) > width:
        return set_cell_size(text[: width * 2], width - 1) + "…" if width > 1 else text[:width]
    pad = width - cell_len(text)
    return (" " * pad + text) if right else (text + " " * pad)


def _short_time(ts: str) -> str:
    """HH:MM:SS of an RFC 3339 timestamp; anything else as it is (made visible)."""
    if _TIMESTAMP.match(ts):
        return ts[11:19]
    return one_line(ts, 8)


def _compact_count(n: int) -> str:
    if n < 100_000:
        return str(n)
    if n < 10_000_000:
        return f"{n / 1000:.0f}k"
    return f"{n / 1_000_000:.0f}M"


def turn_start_tag(plan: CompactionPlan) -> str:
    """The `^` row's label: whose request the split turn continues."""
    if plan.turn_continued:
        where = f" in chunk {plan.turn_start_chunk_id}" if plan.turn_start_chunk_id else ""
        return f"turn start: its request is{where or ' in a chunk'} · "
    return "turn start · "


class HotWindow(ScrollView, can_focus=True):
    """Every event of the hot window, virtualised; keyboard-driven (mouse optional)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "hot-window--header",
        "hot-window--cursor",
        "hot-window--boundary",
        "hot-window--split",
        "hot-window--forbidden",
        "hot-window--corrupt",
        "hot-window--compacted",
        "hot-window--pulled",
        "hot-window--cutline",
        "hot-window--mark",
        "hot-window--root",
        "hot-window--synthetic",
        "hot-window--dim",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False, id="hot.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="hot.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="hot.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="hot.page_down"),
        Binding("home,g", "first", "First", show=False, id="hot.first"),
        Binding("end,G", "last", "Last", show=False, id="hot.last"),
        Binding("enter", "app.focus_detail", "Detail", show=False, id="hot.detail"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)
    follow: reactive[bool] = reactive(True)
    show_preview: reactive[bool] = reactive(False)

    @dataclass(eq=False)
    class RowHighlighted(Message):
        """The cursor moved to `row` (None: the list is empty)."""

        row: Row | None
        snapshot: HotWindowSnapshot

    @dataclass(eq=False)
    class FollowChanged(Message):
        """Follow mode (the cursor stays on the newest row) was turned on or off."""

        follow: bool

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.snapshot: HotWindowSnapshot = EMPTY_SNAPSHOT
        self.cut_preview: CutPreview | None = None
        self.loading_text: str | None = "loading events.jsonl…"
        self._frame_styles: dict[str, Style] | None = None
        """Styles looked up while one frame renders (see `render_lines`), else None."""

    # -- data -------------------------------------------------------------------------------

    def set_snapshot(self, snapshot: HotWindowSnapshot) -> None:
        """Show new rows; keeps the cursor on the same row unless following the tail."""
        self.snapshot = snapshot
        self.loading_text = None
        if self.cut_preview is not None and self.cut_preview.generation != snapshot.generation:
            self.cut_preview = None
        self._update_virtual_size()
        if self.follow:
            self.cursor = max(0, snapshot.length - 1)
        else:
            self.cursor = min(self.cursor, max(0, snapshot.length - 1))
        if self.follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        self.call_after_refresh(self._keep_in_view)
        self.refresh()

    def show_cut(self) -> bool:
        """Put the cursor on the row the new hot window would open at (follow off)."""
        cut = self._cut_line()
        if cut is None:
            return False
        self.follow = False
        self.cursor = cut
        return True

    def set_cut_preview(self, preview: CutPreview | None) -> None:
        self.cut_preview = preview
        self._update_virtual_size()
        self.call_after_refresh(self._keep_in_view)
        self.refresh()

    def watch_show_preview(self) -> None:
        self._update_virtual_size()
        self.call_after_refresh(self._keep_in_view)
        self.refresh()

    def watch_follow(self, follow: bool) -> None:
        if follow and self.snapshot.length:
            self.cursor = self.snapshot.length - 1
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        self.post_message(self.FollowChanged(follow))

    def watch_cursor(self, old: int, new: int) -> None:
        self._scroll_cursor_into_view()
        # Again after the next layout: before the first one the region's height is unknown
        # and a scroll computed now would be lost.
        self.call_after_refresh(self._keep_in_view)
        self.refresh()
        self.post_message(self.RowHighlighted(self.current_row, self.snapshot))

    @property
    def current_row(self) -> Row | None:
        snap = self.snapshot
        if 0 <= self.cursor < snap.length:
            return snap.rows[self.cursor]
        return None

    # -- geometry ---------------------------------------------------------------------------

    def _active_preview(self) -> CutPreview | None:
        preview = self.cut_preview
        if not self.show_preview or preview is None:
            return None
        if preview.generation != self.snapshot.generation:
            return None
        return preview

    def _cut_line(self) -> int | None:
        preview = self._active_preview()
        if preview is None or preview.cut_row is None:
            return None
        return preview.cut_row if preview.cut_row < self.snapshot.length else None

    def line_count(self) -> int:
        return self.snapshot.length + (1 if self._cut_line() is not None else 0)

    def row_to_line(self, row: int) -> int:
        cut = self._cut_line()
        return row + 1 if cut is not None and row >= cut else row

    def line_to_row(self, line: int) -> int | None:
        """The row at a content line, or None for the cut line / past the end."""
        cut = self._cut_line()
        if cut is not None:
            if line == cut:
                return None
            if line > cut:
                line -= 1
        return line if 0 <= line < self.snapshot.length else None

    def _update_virtual_size(self) -> None:
        self.virtual_size = Size(0, self.line_count() + 1)

    def on_resize(self, event: events.Resize) -> None:
        self._update_virtual_size()
        self.call_after_refresh(self._keep_in_view)

    def _keep_in_view(self) -> None:
        if self.follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        else:
            self._scroll_cursor_into_view()

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 2)

    def _scroll_cursor_into_view(self) -> None:
        height = self.scrollable_content_region.height - 1  # the header line is fixed
        if height <= 0:
            return
        line = self.row_to_line(self.cursor)
        # On the row the new hot window opens at, the cut line above it comes into view too.
        first = line - 1 if self._cut_line() == self.cursor else line
        top = round(self.scroll_y)
        if first < top:
            self.scroll_to(y=first, animate=False, immediate=True, force=True)
        elif line >= top + height:
            self.scroll_to(y=line - height + 1, animate=False, immediate=True, force=True)

    # -- keys -------------------------------------------------------------------------------

    def _move(self, to: int) -> None:
        last = self.snapshot.length - 1
        if last < 0:
            return
        to = max(0, min(last, to))
        if to != last:
            self.follow = False
        self.cursor = to

    def action_cursor_up(self) -> None:
        self._move(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self._move(self.cursor + 1)

    def action_page_up(self) -> None:
        self._move(self.cursor - self._page())

    def action_page_down(self) -> None:
        self._move(self.cursor + self._page())

    def action_first(self) -> None:
        self._move(0)

    def action_last(self) -> None:
        self._move(self.snapshot.length - 1)

    def on_click(self, event: events.Click) -> None:
        """A click only moves the cursor: rows carry no actions."""
        event.stop()
        if event.y < 1:
            return
        row = self.line_to_row(round(self.scroll_y) + event.y - 1)
        if row is not None:
            self._move(row)
        self.focus()

    # -- rendering --------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        """One frame: the styles every line uses are worked out once for all its lines (per
        line they cost as much as the row itself while rows stream in)."""
        self._frame_styles = {}
        try:
            return super().render_lines(crop)
        finally:
            self._frame_styles = None

    def _style(self, name: str) -> Style:
        styles = self._frame_styles
        if styles is None:
            return self.get_component_rich_style(f"hot-window--{name}")
        style = styles.get(name)
        if style is None:
            style = styles[name] = self.get_component_rich_style(f"hot-window--{name}")
        return style

    def _base_style(self) -> Style:
        styles = self._frame_styles
        if styles is None:
            return self.rich_style
        style = styles.get("")
        if style is None:
            style = styles[""] = self.rich_style
        return style

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self._base_style()
        snap = self.snapshot
        index_width = max(3, len(str(max(0, snap.length - 1))))
        cols = columns_for(width, index_width)
        if y == 0:
            style = base + self._style("header")
            header = " ".join(_fit(c.title, c.width, c.align_right) for c in cols)
            lead = len(header) - len(header.lstrip(" "))
            segments = [
                Segment(header[:lead], style + Style(bold=False)),
                Segment(header[lead:], style),
            ]
            return Strip(segments).adjust_cell_length(width, style)
        line = round(self.scroll_y) + y - 1
        if snap.length == 0:
            if line == 0:
                text = self.loading_text or "events.jsonl is empty (no events in the hot window)"
                return Strip([Segment(text, base + self._style("dim"))]).adjust_cell_length(
                    width, base
                )
            return Strip.blank(width, base)
        cut = self._cut_line()
        if cut is not None and line == cut:
            return self._render_cut_line(width, base)
        row_index = self.line_to_row(line)
        if row_index is None:
            return Strip.blank(width, base)
        rows = snap.rows
        if isinstance(rows, LazyRows) and not rows.is_built(row_index):
            # The first unbuilt row of a frame reads every row on screen at once.
            top = round(self.scroll_y)
            rows.prefetch(top - 1, top + self.scrollable_content_region.height)
        return self._render_row(rows[row_index], cols, width, base)

    def _render_cut_line(self, width: int, base: Style) -> Strip:
        preview = self._active_preview()
        assert preview is not None
        plan = preview.plan
        label = f"✂ cut ({plan.path} path): the new hot window opens below"
        if plan.is_split_turn:
            label += " — split turn"
        text = "── " + label + " "
        style = base + self._style("cutline")
        fill = max(0, width - cell_len(text))
        return Strip([Segment(text + "─" * fill, style)]).adjust_cell_length(width, style)

    def _render_row(self, row: Row, cols: list[Column], width: int, base: Style) -> Strip:
        snap = self.snapshot
        preview = self._active_preview()
        compacted = preview is not None and preview.is_compacted(row)
        pulled = preview is not None and preview.is_pulled_in(row)
        is_cursor = row.index == self.cursor

        row_style = base
        if compacted:
            row_style = row_style + self._style("compacted")
        if row.corrupt:
            row_style = row_style + self._style("corrupt")
        is_root = row.index == snap.root_row and not row.corrupt
        mark = "!" if row.corrupt else "R" if is_root else "S" if row.synthetic else " "
        tag = "root · " if is_root else "split turn · " if row.synthetic else ""
        mark2 = " "
        if preview is not None:
            if row.index == preview.turn_start_row and preview.plan.is_split_turn:
                # The split turn's start, compacted or not (issue 22 item 2): its own request,
                # or the synthetic event standing for one an earlier pass compacted.
                mark2 = "^"
                tag = turn_start_tag(preview.plan) + tag
            elif compacted:
                mark2 = "×"
            elif pulled:
                mark2 = "+"
        link = snap.link_of(row.index)
        link_text = ""
        if link is not None:
            link_text = ("→" if link > row.index else "←") + str(link)
        values = {
            "mark": mark + mark2,
            "index": "…" if snap.partial else str(row.index),
            "id": one_line(row.event_id, 40) if not row.corrupt else f"line {row.line_no}",
            "time": _short_time(row.ts),
            "type": one_line(row.type, 40),
            "role": one_line(row.role, 20),
            "class": CLASS_LABEL.get(row.cut, "-") if row.cut is not None else "-",
            "tokens": _compact_count(row.tokens),
            "cum": _compact_count(snap.cumulative_from_newest(row.index)),
            "link": link_text,
            "preview": tag + (f"{row.error}: " if row.error else "") + row.preview,
        }
        mark_style = (
            "pulled" if pulled else "root" if is_root else "synthetic" if row.synthetic else "mark"
        )
        segments: list[Segment] = []
        for i, col in enumerate(cols):
            text = _fit(values[col.key], col.width, col.align_right)
            style = row_style
            if not compacted and not row.corrupt:
                if col.key == "class" and row.cut is not None:
                    style = style + self._style(
                        {
                            CutClass.BOUNDARY: "boundary",
                            CutClass.SPLIT: "split",
                            CutClass.FORBIDDEN: "forbidden",
                        }[row.cut]
                    )
                elif col.key == "mark":
                    style = style + self._style(mark_style)
                elif col.key in ("cum", "link", "time"):
                    style = style + self._style("dim")
            if col.key == "preview" and tag and not compacted and text.startswith(tag):
                segments.append(Segment(tag, style + self._style(mark_style)))
                text = text[len(tag) :]
            segments.append(Segment(text, style))
            if i < len(cols) - 1:
                segments.append(Segment(" ", row_style))
        strip = Strip(segments).adjust_cell_length(width, row_style)
        if is_cursor:
            cursor = self._style("cursor")
            strip = Strip(list(Segment.apply_style(strip, post_style=cursor)), width)
        return strip
