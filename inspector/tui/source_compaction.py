"""The source agent's own compactions beside ours (issue 23), for the Chunks tab.

An imported or followed log where the agent compacted itself (pi `compaction`, Claude Code
`compact_boundary` + summary, Codex `compacted`) holds a `system_event` marker at the place it
cut, with the agent's summary and sizes in `meta.source_compaction` (core/transcripts/stream.py).
When a chunk this engine made holds such a marker, its detail shows the agent's summary next
to ours with both sizes: the events before the marker in the chunk are the span both
summaries had to keep. Plain `rich.text.Text`, every value through inspector.safe_text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from core.tokens import estimate_event_tokens, estimate_tokens
from inspector.safe_text import safe_line, safe_text

THEIR_SUMMARY_LIMIT = 4_000


def source_compactions(events: Sequence[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """(index in `events`, meta.source_compaction) of every marker, in order."""
    out: list[tuple[int, dict[str, Any]]] = []
    for i, event in enumerate(events):
        meta = event.get("meta")
        info = meta.get("source_compaction") if isinstance(meta, dict) else None
        if isinstance(info, dict):
            out.append((i, info))
    return out


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def side_by_side_text(events: Sequence[dict[str, Any]], summary: str) -> Text | None:
    """'theirs vs ours' for each marker in the chunk's events; None when there is none."""
    found = source_compactions(events)
    if not found:
        return None
    ours = estimate_tokens(summary)
    out = Text()
    for index, info in found:
        agent = info.get("agent") if isinstance(info.get("agent"), str) else "the agent"
        before = sum(estimate_event_tokens(e) for e in events[:index])
        theirs = _int(info.get("summary_tokens"))
        raw = info.get("summary")
        text = raw if isinstance(raw, str) else ""
        out.append("\n")
        out.append(" \u21c4 ", style="bold reverse magenta")
        out.append_text(safe_line(f" {agent} compacted itself here", "bold magenta", limit=60))
        out.append(f" (event {index} of this chunk)\n", style="dim")
        out.append(f"{'theirs':<12}", style="dim")
        tokens_before = _int(info.get("tokens_before"))
        trigger = info.get("trigger")
        if tokens_before is not None:
            out.append(f"{tokens_before:,} tok of context → ", style="bold")
        out.append(
            f"summary {theirs if theirs is not None else estimate_tokens(text):,} tok",
            style="bold",
        )
        if isinstance(trigger, str):
            out.append_text(safe_line(f" ({trigger})", "dim", limit=40))
        out.append("\n")
        out.append(f"{'ours':<12}", style="dim")
        out.append(
            f"{before:,} tok of this chunk's events before it → this chunk's summary {ours:,} tok",
            style="bold",
        )
        out.append("\n")
        if text:
            cut = len(text) > THEIR_SUMMARY_LIMIT
            shown = text[:THEIR_SUMMARY_LIMIT] + ("\u2026" if cut else "")
            for line in shown.splitlines():
                out.append("\u2502 ", style="magenta")
                out.append_text(safe_text(line, "italic"))
                out.append("\n")
        else:
            out.append("  (the log keeps no readable summary)\n", style="dim italic")
    out.rstrip()
    return out
