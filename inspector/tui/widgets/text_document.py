"""TextDocument: a long read-only text (summary.md can be megabytes) drawn line by line.

Textual's Markdown widget mounts one widget per block and lays them all out on the event loop:
an 18 KB summary.md froze the whole inspector for seconds (issue 13). This widget draws only
the rows on screen (the Line API): the text is parsed into styled lines and word-wrapped to the
widget's width by pure functions, which the owner runs in a thread worker; the widget keeps the
result and turns visible rows into strips on demand (cached per row).

Public API:

    doc = TextDocument(id=...)
    doc.set_lines(lines: list[DocLine], wrapped: list[Row], width: int)  # from prepare()
    doc.rows -> int                      # wrapped rows held
    doc.plain_text() -> str              # the logical lines joined (tests, copy)
    prepare(lines, width) -> list[Row]   # pure: word-wrap styled lines to `width` cells

A resize re-wraps in a thread worker; until it lands, the old rows stay on screen (cropped).
Posts `TextDocument.Wrapped` (bubbles) after every applied wrap, so callers and tests can wait
on it instead of sleeping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from rich.cells import cell_len
from rich.segment import Segment
from rich.text import Text
from textual import on, work
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

DocLine = str | Text
"""A logical line: plain text (most lines; cheap) or styled Text."""


def plain_of(line: DocLine) -> str:
    return line if isinstance(line, str) else line.plain


class Row(NamedTuple):
    """One screen row: logical line `line`, characters [start, end)."""

    line: int
    start: int
    end: int


def _width_of(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def wrap_line(plain: str, width: int, indent: int = 0) -> list[tuple[int, int]]:
    """Greedy word wrap of one line to `width` cells: (start, end) character ranges. Breaks at
    blanks when it can, between two wide (CJK) characters, inside a word when a word is longer
    than the width."""
    if width <= 0 or _width_of(plain) <= width:
        return [(0, len(plain))]
    ranges: list[tuple[int, int]] = []
    start = 0
    n = len(plain)
    ascii_only = plain.isascii()
    while start < n:
        if ascii_only:
            end = min(n, start + width)
        else:
            end, cells = start, 0
            while end < n:
                w = cell_len(plain[end])
                if cells + w > width:
                    break
                cells += w
                end += 1
            end = max(end, start + 1)
        # A line may break between two wide (CJK) characters as well as at a blank: a long
        # CJK sentence after "- " is not pushed whole to the next row.
        wide_break = not ascii_only and end < n and cell_len(plain[end - 1 : end + 1]) > 2
        if end < n and not wide_break:
            blank = plain.rfind(" ", start + 1, end + 1)
            if blank > start:
                end = blank + 1
        ranges.append((start, end))
        start = end
    return ranges


def prepare(lines: list[DocLine], width: int) -> list[Row]:
    """Word-wrap every line to `width` cells (pure; run it in a worker for long texts)."""
    rows: list[Row] = []
    for number, line in enumerate(lines):
        plain = line if isinstance(line, str) else line.plain
        if len(plain) <= width and (plain.isascii() or cell_len(plain) <= width):
            rows.append(Row(number, 0, len(plain)))
            continue
        for start, end in wrap_line(plain, width):
            rows.append(Row(number, start, end))
    return rows


class TextDocument(ScrollView, can_focus=True):
    """Read-only styled text, drawn row by row; only visible rows cost anything."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "scroll_up", "Up", show=False),
        Binding("down", "scroll_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "scroll_home", "Top", show=False),
        Binding("end", "scroll_end", "End", show=False),
    ]

    @dataclass(eq=False)
    class Wrapped(Message):
        """Rows for a new text or width are on screen."""

        document: TextDocument
        rows: int

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[DocLine] = []
        self._rows: list[Row] = []
        self._width = 0
        self._generation = 0
        self._cache: dict[int, Strip] = {}

    @property
    def rows(self) -> int:
        return len(self._rows)

    @property
    def wrap_width(self) -> int:
        """The width the text should wrap to: the content width, less a vertical scrollbar."""
        width = self.scrollable_content_region.width or self.size.width
        return max(10, width - (0 if self.show_vertical_scrollbar else 2)) if width else 0

    def plain_text(self) -> str:
        return "\n".join(plain_of(line) for line in self._lines)

    def set_lines(self, lines: list[DocLine], rows: list[Row], width: int) -> None:
        """Show these lines, already wrapped to `width` (re-wrapped later if that is stale)."""
        self._generation += 1
        self._lines = lines
        self._apply(rows, width)
        self.scroll_to(y=min(self.scroll_y, max(0, len(rows) - 1)), animate=False)
        self._maybe_rewrap()

    def _apply(self, rows: list[Row], width: int) -> None:
        self._rows = rows
        self._width = width
        self._cache.clear()
        self.virtual_size = Size(max(width, 1), len(rows))
        self.refresh()
        self.post_message(self.Wrapped(self, len(rows)))

    def on_resize(self, event: Resize) -> None:
        self._maybe_rewrap()

    def _maybe_rewrap(self) -> None:
        width = self.wrap_width
        if width and width != self._width and self._lines:
            self._rewrap(self._lines, width, self._generation)

    @dataclass(eq=False)
    class _Rewrapped(Message):
        """Rows wrapped to a new width by the worker (dropped if `generation` is stale)."""

        rows: list[Row]
        width: int
        generation: int

    @work(thread=True, exclusive=True, group="text-document-wrap")
    def _rewrap(self, lines: list[DocLine], width: int, generation: int) -> None:
        rows = prepare(lines, width)
        if not get_current_worker().is_cancelled:
            self.post_message(self._Rewrapped(rows, width, generation))

    @on(_Rewrapped)
    def _on_rewrapped(self, message: _Rewrapped) -> None:
        message.stop()
        if message.generation == self._generation:
            self._apply(message.rows, message.width)

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width or self.size.width
        style = self.rich_style
        if index >= len(self._rows):
            return Strip.blank(width, style)
        strip = self._cache.get(index)
        if strip is None:
            row = self._rows[index]
            line = self._lines[row.line]
            piece = (
                Text(line[row.start : row.end])
                if isinstance(line, str)
                else line[row.start : row.end]
            )
            piece.rstrip()
            segments = [
                Segment(seg.text, style + seg.style if seg.style else style)
                for seg in piece.render(self.app.console)
                if seg.text != "\n"
            ]
            strip = Strip(segments)
            if len(self._cache) > 4000:
                self._cache.clear()
            self._cache[index] = strip
        x = self.scroll_offset.x
        return strip.crop_extend(x, x + width, style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()
