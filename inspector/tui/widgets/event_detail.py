"""The selected hot-window event, pretty-printed, with its class, tokens and pair link.

The event is parsed from events.jsonl again when its row is shown (the model keeps no event
dicts). Everything shown comes from the file, so it is built with `inspector.safe_text` (no markup,
control characters visible) and capped: a 5 MB event shows its first `DETAIL_CHARS` characters
and says how many more there are.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from core.events import Event
from inspector.safe_text import safe_text
from inspector.tui.hot_window_model import HotWindowSnapshot, Row
from inspector.tui.widgets.hot_window import CLASS_LABEL

DETAIL_CHARS = 20_000


def _capped(value: Any, limit: int) -> Any:
    """Strings longer than `limit` cut short, so pretty-printing a huge event stays cheap."""
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"… [{len(value) - limit} more chars]"
    if isinstance(value, dict):
        return {k: _capped(v, limit) for k, v in list(value.items())[:500]}
    if isinstance(value, list):
        return [_capped(v, limit) for v in value[:500]]
    return value


def pretty_event(event: Event) -> str:
    return json.dumps(_capped(event, DETAIL_CHARS), ensure_ascii=False, indent=2, default=str)


def describe_row(row: Row, snapshot: HotWindowSnapshot | None) -> Text:
    """Header lines (class, tokens, marks, link) then the event as JSON."""
    out = Text()
    if row.corrupt:
        out.append("corrupt line ", style="bold red")
        out.append(f"{row.line_no} (byte {row.offset})\n", style="bold")
        out.append_text(safe_text(row.error or "", "red"))
        out.append("\n\n")
        out.append_text(safe_text(row.preview))
        return out
    cls = CLASS_LABEL.get(row.cut, "-") if row.cut is not None else "-"
    out.append(f"#{row.index}  ", style="bold")
    out.append_text(safe_text(row.type or "(no type)", "bold", limit=80))
    out.append(f"  class {cls}  {row.tokens:,} tokens")
    if snapshot is not None and row.index < snapshot.length:
        out.append(f"  cum {snapshot.cumulative_from_newest(row.index):,}")
    out.append("\n")
    if snapshot is not None and row.index == snapshot.root_row:
        out.append("pinned root: the session's first user_input\n", style="bold")
    if row.synthetic:
        out.append("synthetic split-turn prefix summary\n", style="bold")
    if snapshot is not None:
        link = snapshot.link_of(row.index)
        if link is not None:
            what = "result" if row.type == "tool_call" else "call"
            out.append(f"tool {what}: row #{link}\n")
    event = snapshot.read_event(row) if snapshot is not None else None
    if event is None:
        out.append("\n")
        out.append("the event could not be read again from events.jsonl", style="bold red")
        out.append(" (it was rewritten; the list reloads)\n" if snapshot is not None else "\n")
        return out
    meta = event.get("meta")
    if isinstance(meta, dict) and meta.get("scrubbed"):
        content = event.get("content")
        if isinstance(content, str):
            try:
                content = json.loads(content)
            except ValueError:
                content = None
        if isinstance(content, dict):
            keep = {k: content[k] for k in ("width", "height", "format", "size") if k in content}
            out.append("screenshot (data scrubbed): ")
            out.append_text(safe_text(json.dumps(keep, ensure_ascii=False), limit=300))
            out.append("\n")
    if isinstance(meta, dict) and row.synthetic and isinstance(meta.get("chunk_id"), str):
        out.append("made by chunk ")
        out.append_text(safe_text(meta["chunk_id"], "bold", limit=80))
        out.append(" (enter opens it on the Chunks tab)\n", style="dim")
    content = event.get("content")
    if isinstance(content, str) and content:
        # The text as it reads (newlines as newlines), above the JSON that escapes them.
        out.append("\ncontent\n", style="bold")
        out.append_text(safe_text(content, limit=DETAIL_CHARS))
        out.append("\n")
    out.append("\nevent (JSON)\n", style="bold")
    out.append_text(safe_text(pretty_event(event)))
    return out


def synthetic_chunk_id(row: Row | None, snapshot: HotWindowSnapshot | None) -> str | None:
    """The chunk a synthetic split-turn row was made by (its `meta.chunk_id`), else None."""
    if row is None or not row.synthetic or snapshot is None:
        return None
    event = snapshot.read_event(row)
    meta = event.get("meta") if event is not None else None
    chunk_id = meta.get("chunk_id") if isinstance(meta, dict) else None
    return chunk_id if isinstance(chunk_id, str) and chunk_id else None


class EventDetail(VerticalScroll):
    """Scrollable detail of one event (or a placeholder)."""

    def compose(self) -> ComposeResult:
        yield Static(Text("no event selected", style="dim"), id="detail-body", markup=False)

    def show_row(self, row: Row | None, snapshot: HotWindowSnapshot | None = None) -> None:
        body = self.query_one("#detail-body", Static)
        if row is None:
            body.update(Text("no event selected", style="dim"))
        else:
            body.update(describe_row(row, snapshot))
        self.scroll_home(animate=False)
