"""The status header: where we are, how big the session is, and whether it is being watched.

Two lines, built as `Text` (session ids, model names and paths come from files and are shown
literally). `HeaderInfo` is plain data the app assembles from the model and a light status read.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from inspector.safe_text import one_line


@dataclass(frozen=True)
class HeaderInfo:
    root: str
    session_id: str | None = None
    model: str | None = None
    context_window: int = 0
    event_count: int = 0
    hot_tokens: int = 0
    last_prompt_tokens: int | None = None
    chunk_count: int = 0
    pending_count: int = 0
    corrupt_lines: int = 0
    maintenance: str = "idle"
    watch_mode: str = "watching"
    read_only: bool = False
    archived: bool = False
    index_error: str | None = None
    loading: bool = False


def _num(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def render_header(info: HeaderInfo) -> Text:
    line1 = Text(no_wrap=True, overflow="ellipsis")
    line1.append("root ", style="dim")
    root = one_line(info.root, 10_000)
    line1.append(root if len(root) <= 40 else "…" + root[-39:], style="bold")
    line1.append("  session ", style="dim")
    line1.append(one_line(info.session_id or "(none yet)", 40))
    line1.append("  model ", style="dim")
    line1.append(one_line(info.model or "(default)", 30))
    line1.append(f" window {_num(info.context_window)}")
    if info.archived:
        line1.append("  ARCHIVED", style="bold")
    elif info.read_only:
        line1.append("  READ-ONLY", style="bold")

    line2 = Text(no_wrap=True, overflow="ellipsis")
    parts = [
        ("events", _num(info.event_count) + (" …" if info.loading else "")),
        ("hot", _num(info.hot_tokens)),
        ("prompt", _num(info.last_prompt_tokens)),
        ("chunks", _num(info.chunk_count)),
        ("pending", _num(info.pending_count)),
        ("corrupt", _num(info.corrupt_lines)),
        ("pass", info.maintenance),
        ("files", info.watch_mode),
    ]
    for i, (label, value) in enumerate(parts):
        if i:
            line2.append("  ")
        line2.append(f"{label} ", style="dim")
        style = "bold"
        if label == "corrupt" and info.corrupt_lines:
            style = "bold red"
        if label == "pass" and value != "idle":
            style = "bold yellow"
        line2.append(value, style=style)
    if info.index_error:
        line2.append("  index: ", style="bold red")
        line2.append(one_line(info.index_error, 80), style="red")
    out = Text("\n", no_wrap=True, overflow="ellipsis").join([line1, line2])
    out.no_wrap = True
    return out


class StatusHeader(Static):
    """Two status lines at the top of the screen."""

    DEFAULT_CSS = """
    StatusHeader {
        height: 2;
        background: $panel;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, info: HeaderInfo, *, id: str | None = None) -> None:
        super().__init__(render_header(info), id=id, markup=False)
        self.info = info

    def set_info(self, info: HeaderInfo) -> None:
        if info != self.info:
            self.info = info
            self.update(render_header(info))
