"""SummaryView: summary.md (Rolling Summary and Recent Chunks, split-turn parts marked), its size
against its bound and the Rolling Summary's line count against its cap, summary_archive.md, and
a raw view.

Public API (for the app):

    view = SummaryView(id="summary")
    view.manager: MemoryManager | None  # attach() sets it; used by reload() only
    view.set_data(summary_md: str | None, archive_md: str | None,
                  max_rolling_lines: int, error: str | None = None,
                  *, bound_tokens: int | None = None) -> AwaitComplete
        # Plain data in (None: the file does not exist). Returns an optionally awaitable
        # object: await it to know the text is on screen. Unchanged data costs nothing.
    view.reload() -> None
        # Reads manager.paths.summary / .summary_archive in a thread worker (only posts when a
        # file changed), cap and bound from manager.config, then set_data.
    view.raw: bool                           # raw (plain text) instead of the styled view
    view.file: Literal["summary", "archive"] # which file is shown
    view.action_toggle_raw(), view.action_toggle_file()
    view.rolling_line_count -> int | None    # from core.compaction.summaries.parse_summary_md
    view.shown_text() -> str                 # the text on screen (plain), for tests

Nothing here blocks the event loop (issue 13: a Markdown widget per block froze the app for
seconds): parsing, styling and word-wrapping run in a thread worker, and the text is drawn by
`TextDocument`, which renders only the rows on screen. Posts `SummaryView.Shown` when a new text
is on screen.

Keys (when focus is inside the view): v toggles styled/raw, A (shift+a; plain a is the app's
append) toggles summary.md / summary_archive.md. Binding ids: "summary.raw", "summary.file".

Hostile text: the styled view is built here from the file's lines (no Markdown engine, no
links, no markup); control characters are made visible; hand-edited nonsense and an empty file
render without error; what parse_summary_md finds odd is listed in the status line. Very large
files are cut at RAW_LIMIT characters with a note.
Styles: inspector/tui/styles/widgets/summary_view.tcss.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

from core.compaction.summaries import parse_summary_md, summary_md_bound
from core.manager import MemoryManager
from core.tokens import estimate_tokens
from inspector.safe_text import safe_text, visible
from inspector.tui.views.session_view import SessionView
from inspector.tui.widgets.text_document import DocLine, Row, TextDocument, plain_of, prepare

RAW_LIMIT = 2_000_000
RAW_LINE_LIMIT = 20_000
SPLIT_MARKER = "Turn Context (split turn):"
DEFAULT_WIDTH = 78
FIRST_SCREEN_CHARS = 40_000
"""A file longer than this is shown in two steps: its first screens at once, then all of it."""

FileName = Literal["summary", "archive"]

_ENTRY_RE = re.compile(r"^- \*\*(.+?)\*\*\s*$")
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*")
_RULE_RE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")


def _cap(text: str) -> tuple[str, int]:
    if len(text) <= RAW_LIMIT:
        return text, 0
    return text[:RAW_LIMIT], len(text) - RAW_LIMIT


def _cut_line(line: str) -> str:
    if len(line) > RAW_LINE_LIMIT:
        return line[:RAW_LINE_LIMIT] + f"\u2026 [{len(line) - RAW_LINE_LIMIT} more chars]"
    return line


def raw_lines(text: str) -> list[DocLine]:
    """The file as plain lines: control characters visible, very long lines and files cut."""
    capped, dropped = _cap(text)
    lines: list[DocLine] = [_cut_line(line) for line in visible(capped).split("\n")]
    if dropped:
        lines.append(Text(f"[raw view cut: {dropped:,} more characters]", style="bold yellow"))
    return lines


def _inline(line: str, style: str = "") -> DocLine:
    """One line with `**bold**` shown bold (the asterisks dropped); nothing else is parsed."""
    if "**" not in line and not style:
        return line
    if "**" not in line:
        return Text(line, style=style)
    out = Text(style=style)
    at = 0
    for match in _BOLD_RE.finditer(line):
        out.append(line[at : match.start()])
        out.append(match.group(1), style="bold")
        at = match.end()
    out.append(line[at:])
    return out


def styled_lines(text: str) -> list[DocLine]:
    """summary.md's lines styled by their role: headings, chunk entries, the split-turn part of
    an entry marked (`✂ split turn: turn context`, its lines barred), rules drawn. Pure; the
    text is shown literally (no links, no markup)."""
    capped, dropped = _cap(text)
    out: list[DocLine] = []
    in_split = False
    blank_run = 0
    for raw in visible(capped).split("\n"):
        line = _cut_line(raw)
        stripped = line.strip()
        if not stripped:
            blank_run += 1
            if blank_run == 1 and out:
                out.append("")
            continue
        blank_run = 0
        if line.startswith("# "):
            in_split = False
            out.append(Text(line[2:].strip(), style="bold underline"))
        elif line.startswith("## "):
            in_split = False
            out.append(Text(line[3:].strip(), style="bold cyan"))
        elif _ENTRY_RE.match(line):
            in_split = False
            match = _ENTRY_RE.match(line)
            assert match is not None
            entry = Text("\u25aa ", style="cyan")
            entry.append(match.group(1), style="bold cyan")
            out.append(entry)
        elif stripped == SPLIT_MARKER:
            in_split = True
            if out and plain_of(out[-1]).strip("\u2500 ") == "" and plain_of(out[-1]):
                out.pop()  # the --- separator before the marker: the marker replaces it
            indent = line[: len(line) - len(line.lstrip())]
            marker = Text(indent)
            marker.append(" \u2702 split turn: turn context ", style="bold reverse yellow")
            out.append(marker)
        elif _RULE_RE.match(line):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(Text(indent + "\u2500" * 24, style="dim"))
        elif in_split:
            indent = line[: len(line) - len(line.lstrip())]
            barred = Text(indent)
            barred.append("\u2502 ", style="yellow")
            inline = _inline(line.lstrip(), "italic")
            barred.append_text(inline if isinstance(inline, Text) else Text(inline))
            out.append(barred)
        else:
            out.append(_inline(line))
    while out and not plain_of(out[-1]):
        out.pop()
    if dropped:
        out.append(Text(f"[view cut: {dropped:,} more characters]", style="bold yellow"))
    return out


@dataclass(frozen=True)
class FileFacts:
    """What the status line says about one file (computed in the worker)."""

    exists: bool
    chars: int
    tokens: int
    rolling_lines: int | None
    recent: int
    truncated: int
    problems: tuple[str, ...]
    entries: int = 0


def file_facts(text: str | None) -> FileFacts:
    if text is None:
        return FileFacts(False, 0, 0, None, 0, 0, ())
    if not text.strip():
        return FileFacts(True, len(text), 0, 0, 0, 0, ("empty",))
    parsed = parse_summary_md(text)
    return FileFacts(
        True,
        len(text),
        estimate_tokens(text),
        len(parsed.rolling_lines),
        len(parsed.recent),
        parsed.rolling_truncated,
        tuple(parsed.problems),
        sum(1 for line in text.split("\n") if line.startswith("- **")),
    )


def placeholder(file: FileName, text: str | None) -> list[DocLine] | None:
    """The line shown instead of a missing or empty file (None: the file has text)."""
    if text is not None and text.strip():
        return None
    if file == "archive":
        return [
            Text(
                "No archive yet: summary_archive.md is written when a chunk is pushed out "
                "of Recent Chunks.",
                style="dim italic",
            )
        ]
    if text is None:
        return [Text("No summary.md yet: nothing has been compacted in this session.", "dim")]
    return [Text("summary.md is empty.", style="dim italic")]


def document_lines(file: FileName, text: str | None, raw: bool) -> list[DocLine]:
    shown = placeholder(file, text)
    if shown is not None:
        return shown
    assert text is not None
    return raw_lines(text) if raw else styled_lines(text)


def _done() -> AwaitComplete:
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    future.set_result(None)
    return AwaitComplete(future)


class SummaryView(SessionView):
    """summary.md / summary_archive.md, styled or raw, with size, bound and line counts."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "toggle_raw", "Raw", id="summary.raw"),
        Binding("A", "toggle_file", "Archive", id="summary.file"),
    ]

    @dataclass(eq=False)
    class Shown(Message):
        """A new text (or file / raw choice) is on screen."""

    @dataclass(eq=False)
    class _Loaded(Message):
        """summary.md and the archive's summary as read by the worker (or the errors)."""

        summary_md: str | None
        archive_md: str | None
        cap: int
        error: str | None
        bound: int | None

    @dataclass(eq=False)
    class _Prepared(Message):
        """Lines and wrapped rows for the document (`partial`: the first screenful only)."""

        generation: int
        lines: list[DocLine]
        rows: list[Row]
        width: int
        facts: dict[str, FileFacts]
        partial: bool = False

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.raw = False
        self.file: FileName = "summary"
        self.rolling_line_count: int | None = None
        self._data: tuple[str | None, str | None, int, str | None, int | None] | None = None
        self._summary_md: str | None = None
        self._archive_md: str | None = None
        self._cap = 0
        self._bound: int | None = None
        self._error: str | None = None
        self._facts: dict[str, FileFacts] = {}
        self._facts_ready = True
        self._generation = 0
        self._waiting: list[tuple[int, asyncio.Future[None]]] = []
        self._last_read: tuple[str | None, str | None] | None = None
        self.renders = 0
        """How many texts were prepared (tests check unchanged data costs none)."""

    def compose(self) -> ComposeResult:
        yield Static(Text("summary.md: not loaded yet", style="dim"), id="summary-status")
        yield TextDocument(id="summary-doc")

    @property
    def document(self) -> TextDocument:
        return self.query_one("#summary-doc", TextDocument)

    def shown_text(self) -> str:
        return self.document.plain_text()

    # -- data ----------------------------------------------------------------------------

    def set_data(
        self,
        summary_md: str | None,
        archive_md: str | None,
        max_rolling_lines: int,
        error: str | None = None,
        *,
        bound_tokens: int | None = None,
    ) -> AwaitComplete:
        """Show these file contents (None: file missing). Await the result to know that the
        text is on screen. The same data as shown already costs nothing."""
        data = (summary_md, archive_md, max_rolling_lines, error, bound_tokens)
        if data == self._data:
            return _done()
        text_changed = self._data is None or self._data[:2] != data[:2]
        self._data = data
        self._summary_md, self._archive_md = summary_md, archive_md
        self._cap, self._error, self._bound = max_rolling_lines, error, bound_tokens
        if not text_changed:
            self._update_status()
            return _done()
        self._facts_ready = False
        return self._prepare_now(facts=True)

    def _prepare_now(self, *, facts: bool) -> AwaitComplete:
        self._generation += 1
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((self._generation, future))
        text = self._summary_md if self.file == "summary" else self._archive_md
        width = self.document.wrap_width or DEFAULT_WIDTH
        self._prepare(
            self._generation,
            self.file,
            text,
            self.raw,
            width,
            (self._summary_md, self._archive_md) if facts or not self._facts_ready else None,
            self.document.scroll_y < 40,
        )
        return AwaitComplete(future)

    @work(thread=True, exclusive=True, group="summary-prepare")
    def _prepare(
        self,
        generation: int,
        file: FileName,
        text: str | None,
        raw: bool,
        width: int,
        both: tuple[str | None, str | None] | None,
        at_top: bool = True,
    ) -> None:
        if text is not None and len(text) > FIRST_SCREEN_CHARS and at_top:
            # A long file: its first screens go out first, the whole text follows.
            head = text[: text.rfind("\n", 0, FIRST_SCREEN_CHARS) + 1 or FIRST_SCREEN_CHARS]
            first = document_lines(file, head, raw)
            first_rows = prepare(first, width)
            if get_current_worker().is_cancelled:
                return
            self.post_message(self._Prepared(generation, first, first_rows, width, {}, True))
        lines = document_lines(file, text, raw)
        rows = prepare(lines, width)
        if get_current_worker().is_cancelled:
            return
        self.post_message(self._Prepared(generation, lines, rows, width, {}))
        if both is not None:
            # After the text is on its way: the figures of the status line come second.
            facts = {"summary": file_facts(both[0]), "archive": file_facts(both[1])}
            if not get_current_worker().is_cancelled:
                self.post_message(self._Prepared(generation, [], [], width, facts))

    @on(_Prepared)
    def _on_prepared(self, message: _Prepared) -> None:
        message.stop()
        if message.generation != self._generation:
            return
        if message.facts:
            self._facts.update(message.facts)
            self._facts_ready = True
            summary = self._facts.get("summary")
            self.rolling_line_count = summary.rolling_lines if summary else None
            self._update_status()
            self._resolve(message.generation)
            return
        if message.partial:  # the first screens of a long file; the whole text follows
            self.document.set_lines(message.lines, message.rows, message.width)
            return
        self.renders += 1
        self.document.set_lines(message.lines, message.rows, message.width)
        self._update_status()
        if self._facts_ready:
            self._resolve(message.generation)
        self.post_message(self.Shown())

    def _resolve(self, generation: int) -> None:
        for waited, future in self._waiting:
            if waited <= generation and not future.done():
                future.set_result(None)
        self._waiting = [(g, f) for g, f in self._waiting if not f.done()]

    @work(thread=True, exclusive=True, group="summary-reload")
    def _read(self, manager: MemoryManager) -> None:
        """Read both files through `manager.paths`, then set_data."""
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
        try:
            bound: int | None = summary_md_bound(manager.config)
        except Exception:  # a config from another version: no bound shown
            bound = None
        self.post_result(self._Loaded(summary, archive, cap, "; ".join(errors) or None, bound))

    @on(_Loaded)
    def _on_loaded(self, message: _Loaded) -> None:
        message.stop()
        self.set_data(
            message.summary_md,
            message.archive_md,
            message.cap,
            message.error,
            bound_tokens=message.bound,
        )

    # -- display -------------------------------------------------------------------------

    def _update_status(self) -> None:
        out = Text()
        name = "summary.md" if self.file == "summary" else "summary_archive.md"
        facts = self._facts.get(self.file)
        out.append(name, style="bold")
        out.append(" (raw)" if self.raw else "", style="dim")
        if facts is None:
            out.append("  \u00b7  reading\u2026", style="dim")
        elif not facts.exists:
            out.append(
                "  \u00b7  no archive yet" if self.file == "archive" else "  \u00b7  none yet",
                style="dim",
            )
        else:
            out.append(f"  \u00b7  {facts.tokens:,} tok", style="bold")
            if self.file == "summary" and self._bound:
                over = facts.tokens > self._bound
                out.append(f" / {self._bound:,} bound", style="bold red" if over else "")
            out.append(f" ({facts.chars:,} chars)", style="dim")
        if self.file == "summary":
            out.append("  \u00b7  Rolling ")
            count = facts.rolling_lines if facts else None
            if count is None:
                out.append("\u2013", style="dim")
            else:
                over = bool(self._cap) and count > self._cap
                near = bool(self._cap) and count >= self._cap
                style = "bold red" if over else ("bold yellow" if near else "bold")
                out.append(f"{count} / {self._cap} lines", style=style)
                if count == 0 and facts and facts.recent:
                    out.append(" (no chunk pushed out yet)", style="dim")
            if facts and facts.truncated:
                out.append(f" ({facts.truncated} earlier truncated)", style="yellow")
            out.append(f"  \u00b7  Recent Chunks {facts.recent if facts else 0}")
        elif facts and facts.exists:
            out.append(f"  \u00b7  {facts.entries} chunks pushed out")
        if self._error:
            out.append("\n")
            out.append_text(safe_text(self._error, "bold red", limit=300))
        problems = facts.problems if facts and self.file == "summary" else ()
        if problems:
            out.append("\n")
            out.append("\u26a0 ", style="yellow")
            shown = "summary.md is empty" if problems == ("empty",) else "; ".join(problems[:5])
            out.append_text(safe_text(shown, "yellow", limit=300))
        self.query_one("#summary-status", Static).update(out)

    def _switch(self) -> None:
        self._update_status()
        if self._data is not None:
            self._prepare_now(facts=False)

    def action_toggle_raw(self) -> None:
        self.raw = not self.raw
        self._switch()

    def action_toggle_file(self) -> None:
        self.file = "archive" if self.file == "summary" else "summary"
        self._switch()
