"""HelpScreen (`?`): what every mark, colour-free sign and key of the inspector means.

Public API (for the app):

    HelpScreen(keys: Sequence[tuple[str, str, str]])   # ModalScreen[None]
        # keys: (where, key, what) rows, e.g. ("everywhere", "m", "Run maintenance")
    help_text(keys, width=None) -> Text                 # the same content, for tests and docs
        # width: wrap each explanation to it, continuation lines under the explanation
    help_keys(bindings) -> list[(where, key, what)]     # the help table: the app's bindings,
        # then each view's own (HELP_PLACES), then the what-if panel's

The legend is written here, next to the widgets it describes (hot window marks, the budget
gauge, the runs sparkline, the Chunks and Summary tabs); the keys come from the bindings
themselves (`help_keys(InspectorApp.BINDINGS)`), so a new key cannot be left out.
Keys: escape, ? or q close it; arrows / page keys scroll.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from inspector.tui.views.archive_view import ArchiveView
from inspector.tui.views.chunks_view import ChunksView
from inspector.tui.views.prompt_view import PromptView
from inspector.tui.views.recall_view import RecallView
from inspector.tui.views.summary_view import SummaryView
from inspector.tui.views.timeline_view import TimelineView
from inspector.tui.widgets.hot_window import HotWindow

KEY_NAMES = {
    "slash": "/",
    "question_mark": "?",
    "space": "space",
    "escape": "esc",
    "pageup": "pgup",
    "pagedown": "pgdn",
}

HELP_PLACES: tuple[tuple[str, type[Widget]], ...] = (
    ("hot window (tab 1)", HotWindow),
    ("Chunks tab (2)", ChunksView),
    ("Summary tab (3)", SummaryView),
    ("Prompt tab (4)", PromptView),
    ("Recall tab (5)", RecallView),
    ("Archive tab (6)", ArchiveView),
    ("Timeline tab (8, T)", TimelineView),
)
"""Where each view's own keys work, in the help screen."""

WHAT_IF_KEYS: tuple[tuple[str, str, str], ...] = (
    ("What-if panel (w)", "digits", "type a number into the focused field"),
    ("What-if panel (w)", "tab / shift+tab", "next / previous field"),
    ("What-if panel (w)", "enter", "apply; the cut line moves and comes into view"),
    ("What-if panel (w)", "esc", "back to the hot window (values stay)"),
)


def key_display(keys: str) -> str:
    """ "R,ctrl+r" as "R / ctrl+r", "slash" as "/"."""
    return " / ".join(KEY_NAMES.get(k.strip(), k.strip()) for k in keys.split(","))


def help_keys(bindings: Sequence[BindingType]) -> list[tuple[str, str, str]]:
    """(where, key, what) for every binding of the app (`bindings`) and of each view."""
    rows: list[tuple[str, str, str]] = []
    for binding in bindings:
        if isinstance(binding, Binding):
            rows.append(("everywhere", key_display(binding.key), binding.description))
    rows.append(("everywhere", "ctrl+p", "Command palette: every action, searchable"))
    for where, widget in HELP_PLACES:
        for view_binding in getattr(widget, "BINDINGS", []):
            if isinstance(view_binding, Binding):
                rows.append((where, key_display(view_binding.key), view_binding.description))
    return [*rows, *WHAT_IF_KEYS]


LEGEND: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Hot window marks (first column)",
        (
            ("R", "the pinned root: the session's first request, never compacted"),
            ("S", "a synthetic split-turn event (what a pass wrote in place of a turn's start)"),
            ("!", "a corrupt line of events.jsonl (repair moves it to corrupt.jsonl)"),
            ("×", "cut preview (p): this event would be compacted by the next pass"),
            ("+", "cut preview: leading context pulled into the new hot window"),
            ("^", "cut preview: the turn start of a split turn"),
            ("R^ S× …", "two marks together: the row's kind, then what the preview does to it"),
            ("✂ cut", "cut preview: the new hot window would open at the row below this line"),
            ("bound / split / forbid", "cut class: a legal cut, a split-turn cut, never a cut"),
        ),
    ),
    (
        "Budget gauge (under the header)",
        (
            ("█", "the prompt size the provider recorded"),
            ("▓ … est.", "the estimated part (events appended since the recorded size)"),
            ("R", "window − reserve: a pass runs when the prompt reaches it"),
            ("%", "compress_at_percent of the window: the other token threshold"),
            ("runs ▁▃▇", "prompt size per observed run, newest on the right"),
            ("| in runs", "a compaction happened between two runs"),
            ("verdict", "what happens now: idle, a pass would compact (m runs it), is running"),
            ("cal.", "the provider's fixed part + tokens per estimated token, once learned"),
        ),
    ),
    (
        "Chunks and Summary tabs",
        (
            ("tok before→after", "prompt before the pass → kept hot window + the chunk's summary"),
            ("compression", "estimate of the chunk's events → estimate of its summary"),
            ("dropped", "identifiers said or used in the chunk that its summary does not name"),
            ("✂ split turn", "the part of a summary that holds a turn cut in two"),
            ("│", "lines of that split-turn part"),
            ("tok / bound", "summary.md's estimated size against the most it can reach"),
            ("lines / cap", "Rolling Summary lines against max_rolling_summary_lines"),
        ),
    ),
    (
        "Header",
        (
            ("watched / polled / off", "how file changes reach the screen"),
            ("read-only", "started with --read-only, or viewing an archived session"),
            ("follow", "the hot window keeps the newest event in view (f toggles)"),
        ),
    ),
)


CLOSING = "ctrl+p lists every action with its key; escape, ? or q close this help."

INDENT = 26
"""Cells before an explanation: the sign or key column (2 + 24, and 4 + 22 for keys)."""


def wrap_words(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells, broken at blanks (a word longer than a line
    is cut); one line when width is too small to be worth wrapping."""
    if width < 8 or cell_len(text) <= width:
        return [text]
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        while cell_len(word) > width:  # a word longer than the line: cut it
            if line:
                lines.append(line)
                line = ""
            cut = width
            while cell_len(word[:cut]) > width:
                cut -= 1
            lines.append(word[:cut])
            word = word[cut:]
        candidate = f"{line} {word}" if line else word
        if cell_len(candidate) <= width:
            line = candidate
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


def _explained(out: Text, head: str, meaning: str, width: int | None) -> None:
    """One row: the sign or key in bold, then its explanation, wrapped so that continuation
    lines start under the explanation instead of at column 0 (legible at 80 columns)."""
    out.append(head, style="bold")
    room = None if width is None else width - cell_len(head)
    lines = [meaning] if room is None else wrap_words(meaning, room)
    out.append(lines[0] + "\n")
    for line in lines[1:]:
        out.append(" " * cell_len(head) + line + "\n")


def help_text(keys: Sequence[tuple[str, str, str]], width: int | None = None) -> Text:
    """The legend, then every key grouped by where it works; with `width`, each explanation
    wraps under itself."""
    out = Text()
    for title, rows in LEGEND:
        out.append(f"{title}\n", style="bold underline")
        for sign, meaning in rows:
            _explained(out, f"  {sign:<24}", meaning, width)
        out.append("\n")
    out.append("Keys\n", style="bold underline")
    where_seen: list[str] = []
    for where, _, _ in keys:
        if where not in where_seen:
            where_seen.append(where)
    for where in where_seen:
        out.append(f"  {where}\n", style="italic")
        for w, key, what in keys:
            if w == where:
                _explained(out, f"    {key:<22}", what, width)
    closing = [CLOSING] if width is None else wrap_words(CLOSING, width)
    out.append("\n" + "\n".join(closing))
    return out


class HelpText(Static):
    """The help's text, wrapped again to its own width whenever that changes."""

    def __init__(self, keys: Sequence[tuple[str, str, str]], *, id: str | None = None) -> None:
        super().__init__(help_text(keys), id=id, markup=False)
        self._keys = list(keys)
        self._width: int | None = None

    def on_resize(self) -> None:
        width = self.content_region.width
        if width > 0 and width != self._width:
            self._width = width
            self.update(help_text(self._keys, width))


class HelpScreen(ModalScreen[None]):
    """The legend of every mark and every key; escape, ? or q close it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close", id="help.close"),
    ]

    def __init__(self, keys: Sequence[tuple[str, str, str]]) -> None:
        super().__init__()
        self._keys = list(keys)

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Static(Text("session-inspector: marks and keys", style="bold"), id="help-title")
            with VerticalScroll(id="help-body", can_focus=True):
                yield HelpText(self._keys, id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
