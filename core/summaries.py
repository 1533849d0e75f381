"""summary.md and summary_archive.md (contract §7), derived from the chunk index.

Both files are a pure function of the index's (chunk_id, summary) list, so the shell re-renders
them at every change and a crash can never leave them out of step with the index.

Rules fixed here:

- Recent Chunks: the last `summary_max_chunks` chunks, oldest first. Every chunk before them has
  been "pushed out": it is an entry of summary_archive.md (oldest first) and folded into the
  Rolling Summary.
- An entry is `- **<chunk_id>**` followed by the summary's lines, each indented two spaces;
  blank lines inside a summary stay blank (no trailing spaces); entries are separated by one
  blank line. A summary is normalised first: trailing spaces cut, leading/trailing blank lines
  dropped.
- Fold: a pushed-out summary adds its non-empty lines to the Rolling Summary, the first one
  prefixed `[<chunk_id>] `; a summary with no text adds `[<chunk_id>] (no summary)`. A folded line
  that starts with `#` is escaped as `\\#` so that no summary can forge a section heading.
- Cap: at most `max_rolling_summary_lines` lines, the marker included. When more were folded,
  the oldest are dropped and exactly one marker `[… N earlier lines truncated]` (N = lines
  dropped) stands first.
- An empty Rolling Summary is the heading with nothing under it:
  `## Rolling Summary\\n\\n## Recent Chunks`.
- With no chunks at all both texts are "" (summary.md exists from the first compaction on). With
  no chunk pushed out yet summary_archive.md is "".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

TITLE = "# Session History (compressed chunks)"
ROLLING_HEADING = "## Rolling Summary"
RECENT_HEADING = "## Recent Chunks"
ARCHIVE_TITLE = "# Session History Archive (chunks pushed out of summary.md)"
_ENTRY_RE = re.compile(r"^- \*\*(.+?)\*\*\s*$")
_MARKER_RE = re.compile(r"^\[… (\d+) earlier lines truncated\]$")


def truncation_marker(dropped: int) -> str:
    return f"[… {dropped} earlier lines truncated]"


@dataclass(frozen=True)
class RenderedSummaries:
    summary_md: str
    archive_md: str
    recent_ids: list[str]
    archived_ids: list[str]
    rolling_lines: list[str]
    rolling_truncated: int
    """How many folded lines the cap dropped (0: no marker)."""
    rolling_line_count: int
    """len(rolling_lines), the marker included: what the TUI compares with the cap."""


@dataclass(frozen=True)
class ParsedSummary:
    rolling_lines: list[str] = field(default_factory=list)
    recent: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def rolling_truncated(self) -> int:
        """N of a leading `[… N earlier lines truncated]` marker, else 0."""
        if self.rolling_lines:
            match = _MARKER_RE.match(self.rolling_lines[0])
            if match:
                return int(match.group(1))
        return 0


def normalize_summary(summary: str) -> str:
    """Trailing spaces cut from every line, leading and trailing blank lines dropped."""
    lines = [line.rstrip() for line in summary.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def render_entry(chunk_id: str, summary: str) -> str:
    """`- **id**` and the summary indented two spaces (blank lines stay empty)."""
    body = normalize_summary(summary)
    lines = [f"- **{chunk_id}**"]
    if body:
        lines.extend(f"  {line}" if line else "" for line in body.split("\n"))
    return "\n".join(lines)


def fold_lines(chunk_id: str, summary: str) -> list[str]:
    """The Rolling Summary lines one pushed-out chunk contributes."""
    lines = [line for line in normalize_summary(summary).split("\n") if line.strip()]
    lines = ["\\" + line if line.startswith("#") else line for line in lines]
    if not lines:
        return [f"[{chunk_id}] (no summary)"]
    lines[0] = f"[{chunk_id}] {lines[0]}"
    return lines


def cap_rolling(lines: list[str], max_lines: int) -> tuple[list[str], int]:
    """The newest lines that fit with the marker; returns (lines, dropped)."""
    if len(lines) <= max_lines:
        return list(lines), 0
    keep = max_lines - 1
    dropped = len(lines) - keep
    return [truncation_marker(dropped), *lines[len(lines) - keep :]], dropped


def render_summary(
    chunks: Sequence[tuple[str, str]],
    *,
    summary_max_chunks: int,
    max_rolling_summary_lines: int,
) -> RenderedSummaries:
    """summary.md and summary_archive.md from [(chunk_id, summary)], oldest first."""
    if summary_max_chunks < 1:
        raise ValueError("summary_max_chunks must be ≥ 1")
    if max_rolling_summary_lines < 2:
        raise ValueError("max_rolling_summary_lines must be ≥ 2")
    if not chunks:
        return RenderedSummaries("", "", [], [], [], 0, 0)
    split = max(0, len(chunks) - summary_max_chunks)
    archived, recent = list(chunks[:split]), list(chunks[split:])

    folded: list[str] = []
    for chunk_id, summary in archived:
        folded.extend(fold_lines(chunk_id, summary))
    rolling, dropped = cap_rolling(folded, max_rolling_summary_lines)

    parts = [TITLE, "", ROLLING_HEADING, ""]
    if rolling:
        parts.extend([*rolling, ""])
    parts.extend([RECENT_HEADING, ""])
    parts.append("\n\n".join(render_entry(cid, text) for cid, text in recent))
    summary_md = "\n".join(parts) + "\n"

    archive_md = ""
    if archived:
        entries = "\n\n".join(render_entry(cid, text) for cid, text in archived)
        archive_md = f"{ARCHIVE_TITLE}\n\n{entries}\n"

    return RenderedSummaries(
        summary_md=summary_md,
        archive_md=archive_md,
        recent_ids=[cid for cid, _ in recent],
        archived_ids=[cid for cid, _ in archived],
        rolling_lines=rolling,
        rolling_truncated=dropped,
        rolling_line_count=len(rolling),
    )


def parse_summary_md(text: str) -> ParsedSummary:
    """Read summary.md back (the TUI shows line count vs cap); never raises.

    Hand-edited files are read as far as they make sense; everything odd is listed in
    `problems`, one line each, with its line number.
    """
    lines = text.splitlines()
    problems: list[str] = []
    if not text.strip():
        return ParsedSummary([], [], ["summary.md is empty"])

    first = next((ln for ln in lines if ln.strip()), "")
    if first.rstrip() != TITLE:
        problems.append(f"line 1: expected the title {TITLE!r}")

    rolling_at = _find(lines, ROLLING_HEADING, 0)
    recent_at = _find(lines, RECENT_HEADING, rolling_at + 1 if rolling_at >= 0 else 0)
    if rolling_at < 0:
        problems.append(f"no {ROLLING_HEADING!r} section")
    if recent_at < 0:
        problems.append(f"no {RECENT_HEADING!r} section")

    rolling: list[str] = []
    if rolling_at >= 0:
        end = recent_at if recent_at >= 0 else len(lines)
        rolling = [ln.rstrip() for ln in lines[rolling_at + 1 : end] if ln.strip()]
        for offset, line in enumerate(rolling):
            if _MARKER_RE.match(line) and offset > 0:
                problems.append("a truncation marker is not the first Rolling Summary line")
                break

    recent: list[tuple[str, str]] = []
    if recent_at >= 0:
        recent = _parse_entries(lines, recent_at + 1, problems)
    return ParsedSummary(rolling, recent, problems)


def _find(lines: list[str], heading: str, start: int) -> int:
    for index in range(max(0, start), len(lines)):
        if lines[index].rstrip() == heading:
            return index
    return -1


def _parse_entries(lines: list[str], start: int, problems: list[str]) -> list[tuple[str, str]]:
    entries: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    for number, line in enumerate(lines[start:], start=start + 1):
        match = _ENTRY_RE.match(line)
        if match:
            chunk_id = match.group(1)
            if chunk_id in seen:
                problems.append(f"line {number}: chunk {chunk_id!r} is listed twice")
            seen.add(chunk_id)
            entries.append((chunk_id, []))
        elif not line.strip():
            if entries:
                entries[-1][1].append("")
        elif line.startswith("  ") and entries:
            entries[-1][1].append(line[2:].rstrip())
        else:
            problems.append(f"line {number}: text outside a chunk entry")
            if entries:
                entries[-1][1].append(line.strip())
    return [(cid, normalize_summary("\n".join(body))) for cid, body in entries]
