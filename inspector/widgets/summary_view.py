"""SummaryView: summary.md rendered as Markdown (Rolling Summary and Recent Chunks), the Rolling
Summary's line count against its cap, summary_archive.md, and a raw view.

Public API (for the app):

    view = SummaryView(id="summary")
    view.manager: MemoryManager | None      # set by the app; used by reload() only
    view.set_data(summary_md: str | None, archive_md: str | None,
                  max_rolling_lines: int, error: str | None = None) -> AwaitComplete
        # Plain data in (None: the file does not exist). Returns an optionally awaitable
        # object: await it to know the Markdown has been mounted. `error` (e.g. a read
        # failure) is shown in the status line.
    view.reload() -> None
        # Convenience: reads manager.paths.summary / .summary_archive in a thread worker, cap
        # from manager.config.max_rolling_summary_lines, then set_data.
    view.raw: bool                           # raw (plain text) instead of rendered Markdown
    view.file: Literal["summary", "archive"] # which file is shown
    view.action_toggle_raw(), view.action_toggle_file()
    view.rolling_line_count -> int | None    # from core.summaries.parse_summary_md

Keys (when focus is inside the view): v toggles rendered/raw, A (shift+a; plain a is the
app's append) toggles summary.md / summary_archive.md. Binding ids: "summary.raw",
"summary.file".

Hostile Markdown: links are never followed (no URL opened, no action run; a notification
says so); control characters are made visible before parsing; hand-edited nonsense and an
empty file render without error; what parse_summary_md finds odd is listed in the status line.
Large files are cut (RENDER_LIMIT / RAW_LIMIT characters) with a note.
Styles: inspector/styles/widgets/summary_view.tcss.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import ContentSwitcher, Markdown, Static, TextArea
from textual.worker import get_current_worker

from core.summaries import parse_summary_md
from inspector.safe_text import safe_text, trail_blanks, visible

if TYPE_CHECKING:
    from core.manager import MemoryManager

RENDER_LIMIT = 200_000
RAW_LIMIT = 1_000_000
RAW_LINE_LIMIT = 20_000

FileName = Literal["summary", "archive"]


def _softbreaks_to_hardbreaks(state: StateCore) -> None:
    for token in state.tokens:
        if token.type == "inline" and token.children:
            for child in token.children:
                if child.type == "softbreak":
                    child.type = "hardbreak"


def line_preserving_parser() -> MarkdownIt:
    """GFM-like Markdown in which every line break is kept: a chunk summary's "Goal:",
    "Progress:", "Key Decisions:" lines stay lines instead of one merged paragraph."""
    parser = MarkdownIt("gfm-like", {"breaks": True})
    parser.core.ruler.push("softbreaks_to_hardbreaks", _softbreaks_to_hardbreaks)
    return parser


class SafeMarkdown(Markdown):
    """Markdown that never follows a link (a click only says that links are not followed) and
    keeps every line break."""

    def __init__(self, markdown: str = "", *, id: str | None = None) -> None:
        super().__init__(markdown, id=id, open_links=False, parser_factory=line_preserving_parser)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        event.prevent_default()
        event.stop()
        self.notify("Links in summaries are not followed.", markup=False)


def _cap(text: str, limit: int, what: str) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"\n\n[{what} cut at {limit} characters]\n", True


def markdown_source(text: str) -> str:
    """Untrusted Markdown made safe to parse: control characters visible, size capped."""
    capped, _ = _cap(text, RENDER_LIMIT, "rendering")
    return visible(capped)


def raw_source(text: str) -> str:
    """The file as plain text: control characters visible, very long lines and files cut."""
    capped, _ = _cap(text, RAW_LIMIT, "raw view")
    lines = []
    for line in visible(capped, keep_newlines=True).split("\n"):
        if len(line) > RAW_LINE_LIMIT:
            line = line[:RAW_LINE_LIMIT] + f"\u2026 [{len(line) - RAW_LINE_LIMIT} more chars]"
        lines.append(line)
    return "\n".join(lines)


class SummaryView(Vertical):
    """summary.md / summary_archive.md, rendered or raw, with the Rolling Summary's line count."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "toggle_raw", "Raw", id="summary.raw"),
        Binding("A", "toggle_file", "Archive", id="summary.file"),
    ]

    class _Loaded(Message):
        def __init__(
            self, summary_md: str | None, archive_md: str | None, cap: int, error: str | None
        ) -> None:
            super().__init__()
            self.summary_md = summary_md
            self.archive_md = archive_md
            self.cap = cap
            self.error = error

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.manager: MemoryManager | None = None
        self.raw = False
        self.file: FileName = "summary"
        self.rolling_line_count: int | None = None
        self._summary_md: str | None = None
        self._archive_md: str | None = None
        self._cap = 0
        self._error: str | None = None
        self._problems: list[str] = []
        self._recent_count = 0
        self._truncated = 0

    def compose(self) -> ComposeResult:
        yield Static(Text("summary.md: not loaded yet", style="dim"), id="summary-status")
        with ContentSwitcher(initial="summary-rendered", id="summary-switcher"):
            with VerticalScroll(id="summary-rendered", can_focus=True):
                yield SafeMarkdown(id="summary-md")
            with VerticalScroll(id="archive-rendered", can_focus=True):
                yield SafeMarkdown(id="archive-md")
            yield TextArea(id="summary-raw", read_only=True, soft_wrap=True)
            yield TextArea(id="archive-raw", read_only=True, soft_wrap=True)

    # -- data ----------------------------------------------------------------------------

    def set_data(
        self,
        summary_md: str | None,
        archive_md: str | None,
        max_rolling_lines: int,
        error: str | None = None,
    ) -> AwaitComplete:
        """Show these file contents (None: file missing). Await the result to know that the
        Markdown is mounted."""
        self._summary_md = summary_md
        self._archive_md = archive_md
        self._cap = max_rolling_lines
        self._error = error
        if summary_md is None or not summary_md.strip():
            self.rolling_line_count = None if summary_md is None else 0
            self._problems = [] if summary_md is None else ["summary.md is empty"]
            self._recent_count = 0
            self._truncated = 0
        else:
            parsed = parse_summary_md(summary_md)
            self.rolling_line_count = len(parsed.rolling_lines)
            self._problems = list(parsed.problems)
            self._recent_count = len(parsed.recent)
            self._truncated = parsed.rolling_truncated

        summary_md_text = (
            summary_md
            if summary_md and summary_md.strip()
            else (
                "*No summary.md yet: nothing has been compacted in this session.*"
                if summary_md is None
                else "*summary.md is empty.*"
            )
        )
        archive_md_text = (
            archive_md
            if archive_md and archive_md.strip()
            else "*No summary_archive.md: no chunk has been pushed out of Recent Chunks yet.*"
        )
        self.query_one("#summary-raw", TextArea).load_text(raw_source(summary_md or ""))
        self.query_one("#archive-raw", TextArea).load_text(raw_source(archive_md or ""))
        self._update_status()
        return AwaitComplete(
            self.query_one("#summary-md", SafeMarkdown).update(markdown_source(summary_md_text)),
            self.query_one("#archive-md", SafeMarkdown).update(markdown_source(archive_md_text)),
        )

    def reload(self) -> None:
        """Read both files through `manager.paths` in a thread worker, then set_data."""
        if self.manager is not None:
            self._reload_worker()

    @work(thread=True, exclusive=True, group="summary-reload")
    def _reload_worker(self) -> None:
        manager = self.manager
        if manager is None:
            return
        errors: list[str] = []

        def read(path: Path) -> str | None:
            try:
                return path.read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:
                return None
            except Exception as exc:  # never crash the UI over a file
                errors.append(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}")
                return None

        summary = read(manager.paths.summary)
        archive = read(manager.paths.summary_archive)
        cap = manager.config.max_rolling_summary_lines
        if not get_current_worker().is_cancelled:
            self.post_message(self._Loaded(summary, archive, cap, "; ".join(errors) or None))

    @on(_Loaded)
    def _on_loaded(self, message: _Loaded) -> None:
        message.stop()
        self.set_data(message.summary_md, message.archive_md, message.cap, message.error)

    # -- display -------------------------------------------------------------------------

    def _update_status(self) -> None:
        out = Text()
        name = "summary.md" if self.file == "summary" else "summary_archive.md"
        out.append(name, style="bold")
        out.append(" (raw)" if self.raw else " (rendered)", style="dim")
        out.append("  \u00b7  Rolling Summary ")
        if self.rolling_line_count is None:
            out.append("\u2013", style="dim")
        else:
            over = self._cap and self.rolling_line_count > self._cap
            near = self._cap and self.rolling_line_count >= self._cap
            style = "bold red" if over else ("bold yellow" if near else "bold")
            out.append(f"{self.rolling_line_count} / {self._cap} lines", style=style)
            if self.rolling_line_count == 0 and self._recent_count:
                out.append(" (no chunk pushed out yet)", style="dim")
        if self._truncated:
            out.append(f" ({self._truncated} earlier truncated)", style="yellow")
        out.append(f"  \u00b7  Recent Chunks {self._recent_count}")
        if self._error:
            out.append("\n")
            out.append_text(safe_text(self._error, "bold red", limit=300))
        if self._problems:
            out.append("\n")
            out.append("\u26a0 ", style="yellow")
            out.append_text(safe_text("; ".join(self._problems[:5]), "yellow", limit=300))
        self.query_one("#summary-status", Static).update(trail_blanks(out))

    def _switch(self) -> None:
        pane = f"{self.file}-{'raw' if self.raw else 'rendered'}"
        switcher = self.query_one("#summary-switcher", ContentSwitcher)
        had_focus = self.has_focus_within
        switcher.current = pane
        if had_focus:
            self.query_one(f"#{pane}").focus()
        self._update_status()

    def action_toggle_raw(self) -> None:
        self.raw = not self.raw
        self._switch()

    def action_toggle_file(self) -> None:
        self.file = "archive" if self.file == "summary" else "summary"
        self._switch()
