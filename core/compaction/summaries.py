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
- Fold (hierarchical): a pushed-out summary adds one line per run it covers (core.compaction.runs):
  `[<chunk_id>] <request> · edited: <paths> · names: <identifiers> → <outcome>`, at most
  `ROLLING_LINE_TOKENS` estimated tokens, paths whole (those that do not fit are counted,
  `(+N more)`; the file record names them all). A run that
  continues in the next chunk (a split turn) is one line, labelled `[<first>–<last>]`. A summary
  without run entries (another backend's free text) folds to one line of its first lines. A
  summary with no text adds `[<chunk_id>] (no summary)`. Every line starts with its chunk label,
  so no summary can forge a section heading and truncation keeps whole entries with their label.
- File record: the newest index entry's `files` field (core.compaction.filerecord) closes the
Rolling
  Summary as `[files] …` lines, from the first pass on; they count in the cap below and take
  at most `record_room(max_rolling_summary_lines)` of it, so every modified file stays named
  after its chunk is folded.
- Cap: at most `max_rolling_summary_lines` lines, the marker and the record included. When more
  were folded, the oldest are dropped and exactly one marker `[… N earlier lines truncated]`
  (N = lines dropped) stands first.
- Bound: with `max_summary_tokens` given, each Recent Chunks entry is cut to
  `entry_budget(max_summary_tokens)`, so that summary.md never exceeds `summary_md_bound(config)`
  (see that function and docs/SUMMARIES.md), whatever the session's length.
- An empty Rolling Summary is the heading with nothing under it:
  `## Rolling Summary\\n\\n## Recent Chunks`.
- With no chunks at all both texts are "" (summary.md exists from the first compaction on). With
  no chunk pushed out yet summary_archive.md is "".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from core.compaction.filerecord import record_from_extra, record_lines, record_room
from core.compaction.runs import (
    CONTINUED_LABEL,
    EDITED_LABEL,
    ERROR_LABEL,
    NAMES_LABEL,
    ORIGINAL_REQUEST_LABEL,
    OUTCOME_LABEL,
    REQUEST_LABEL,
    SPLIT_TURN_MARKER,
)
from core.text import collapse_whitespace, shorten
from core.tokens import estimate_tokens, fit_tokens

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


ROLLING_LINE_TOKENS = 80
"""The most estimated tokens one Rolling Summary line takes."""
ROLLING_REQUEST_CHARS = 240
"""A request is shortened to this many characters in a Rolling Summary line (most requests stay
whole; the file record keeps every edited path, so the request comes first)..."""
ROLLING_REQUEST_TOKENS = 56
"""...and to this many estimated tokens (a CJK request keeps its first 56 characters and leaves
room for a path or the outcome)."""
ROLLING_OUTCOME_TOKENS = 24
"""Room a line's key names leave for the outcome."""
ROLLING_NAMES_TOKENS = 16
"""Room a line's edited paths leave for its key names (the file record names every path)."""
CONTINUED_BELOW = "(continued in Recent Chunks)"
"""The outcome of the newest folded line when its run goes on in a chunk still shown."""
ENTRY_HEADER_TOKENS = 16
"""What an entry's `- **<chunk_id>**` line may take before the summary body is cut for it."""
PAGE_TOKENS = 24
"""Title, the two headings, blank lines and the final newline of summary.md."""


class _SummaryConfig(Protocol):
    @property
    def max_summary_tokens(self) -> int: ...


class BoundConfig(Protocol):
    """What summary_md_bound reads (core.config.CompactionConfig has these attributes)."""

    @property
    def summary_max_chunks(self) -> int: ...
    @property
    def max_rolling_summary_lines(self) -> int: ...
    @property
    def summarizer(self) -> _SummaryConfig: ...


def entry_budget(max_summary_tokens: int) -> int:
    """The most estimated tokens one Recent Chunks entry takes: the summary, the two-space
    indent of its lines (a quarter more at most) and its `- **id**` line."""
    return max_summary_tokens + math.ceil(max_summary_tokens / 4) + ENTRY_HEADER_TOKENS


def summary_md_bound_for(
    summary_max_chunks: int, max_summary_tokens: int, max_rolling_summary_lines: int
) -> int:
    """The most estimated tokens summary.md can take (see `summary_md_bound`)."""
    return (
        PAGE_TOKENS
        + max_rolling_summary_lines * (ROLLING_LINE_TOKENS + 1)
        + summary_max_chunks * (entry_budget(max_summary_tokens) + 1)
    )


def summary_md_bound(config: BoundConfig) -> int:
    """summary.md never exceeds this estimate, whatever the session's length:

    `24 + R × (80 + 1) + C × (S + ⌈S/4⌉ + 16 + 1)` with R = max_rolling_summary_lines,
    C = summary_max_chunks and S = summarizer.max_summary_tokens (the estimate of a text is at
    most the sum of its parts' estimates, each line adds its newline)."""
    return summary_md_bound_for(
        config.summary_max_chunks,
        config.summarizer.max_summary_tokens,
        config.max_rolling_summary_lines,
    )


@dataclass
class RunLine:
    """One run as the Rolling Summary shows it."""

    chunk_ids: list[str]
    request: str
    continued: bool = False
    edits: list[str] = field(default_factory=list)
    outcome: str = ""
    in_progress: bool = False
    names: list[str] = field(default_factory=list)

    def absorb(self, later: RunLine) -> None:
        """The same run continued in a later chunk: one line for both."""
        for chunk_id in later.chunk_ids:
            if chunk_id not in self.chunk_ids:
                self.chunk_ids.append(chunk_id)
        for path in later.edits:
            if path not in self.edits:
                self.edits.append(path)
        for name in later.names:
            if name not in self.names:
                self.names.append(name)
        if later.outcome:
            self.outcome = later.outcome
        self.in_progress = later.in_progress

    def render(self, *, newest: bool = False) -> str:
        """`[id] request · edited: paths → outcome` within ROLLING_LINE_TOKENS: the request
        (shortened) first, then as many whole paths as fit, then the outcome in what is left.
        A split turn without an outcome says `(continued in Recent Chunks)` when it is the
        newest folded line (its rest is shown below), and nothing otherwise (it ended without
        a word from the agent, it is not "in progress")."""
        ids = self.chunk_ids
        label = f"[{ids[0]}]" if len(ids) == 1 else f"[{ids[0]}–{ids[-1]}]"
        request = fit_tokens(shorten(self.request, ROLLING_REQUEST_CHARS), ROLLING_REQUEST_TOKENS)
        line = f"{label} {request}"
        outcome = self.outcome or (CONTINUED_BELOW if self.in_progress and newest else "")
        # The file record names every edited path, so a run with key names leaves them room.
        path_room = ROLLING_LINE_TOKENS - (
            ROLLING_OUTCOME_TOKENS + ROLLING_NAMES_TOKENS if self.names else 0
        )
        if self.edits:
            shown: list[str] = []
            for n, path in enumerate(self.edits):
                more = len(self.edits) - n - 1
                tail = f" (+{more} more)" if more else ""
                candidate = f"{line} · {EDITED_LABEL} {', '.join([*shown, path])}{tail}"
                if estimate_tokens(candidate) > max(path_room, estimate_tokens(line) + 12):
                    break
                shown.append(path)
            if shown:
                rest = len(self.edits) - len(shown)
                line += f" · {EDITED_LABEL} {', '.join(shown)}"
                line += f" (+{rest} more)" if rest else ""
            else:
                line += f" · {EDITED_LABEL} {len(self.edits)} files"
        shown_names: list[str] = []
        for name in self.names:
            candidate = f"{line} · {NAMES_LABEL} {', '.join([*shown_names, name])}"
            if estimate_tokens(candidate) > ROLLING_LINE_TOKENS - ROLLING_OUTCOME_TOKENS:
                break
            shown_names.append(name)
        if shown_names:
            line += f" · {NAMES_LABEL} {', '.join(shown_names)}"
        if outcome:
            room = ROLLING_LINE_TOKENS - estimate_tokens(line + " → ")
            if room >= 4:
                line += " → " + fit_tokens(outcome, room)
        return fit_tokens(line, ROLLING_LINE_TOKENS)


def _value(line: str, label: str) -> str:
    return collapse_whitespace(line.removeprefix("- ").strip()[len(label) :])


def _split_at_marker(summary: str) -> tuple[str, str, str]:
    """(history, marker, prefix) at the split-turn marker *line* (event text quoted inside a
    line never counts)."""
    lines = summary.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == SPLIT_TURN_MARKER:
            return "\n".join(lines[:i]), SPLIT_TURN_MARKER, "\n".join(lines[i + 1 :])
    return summary, "", ""


def run_lines(chunk_id: str, summary: str) -> list[RunLine]:
    """The runs of a chunk summary (its Progress entries, then a split turn's prefix); [] when
    the summary has none (free text from another backend, an old summary)."""
    history, marker, prefix = _split_at_marker(normalize_summary(summary))
    out: list[RunLine] = []
    current: RunLine | None = None
    for raw in history.split("\n"):
        line = raw.strip()
        body = line.removeprefix("- ")
        if raw.startswith("- ") and body.startswith((REQUEST_LABEL, CONTINUED_LABEL)):
            label = REQUEST_LABEL if body.startswith(REQUEST_LABEL) else CONTINUED_LABEL
            current = RunLine([chunk_id], _value(body, label), label == CONTINUED_LABEL)
            out.append(current)
        elif current is not None and raw.startswith("  ") and not raw.startswith("  - "):
            if body.startswith(EDITED_LABEL):
                for path in _value(body, EDITED_LABEL).split(", "):
                    if path and path not in current.edits:
                        current.edits.append(path)
            elif body.startswith(OUTCOME_LABEL):
                current.outcome = _value(body, OUTCOME_LABEL)
            elif body.startswith(NAMES_LABEL):
                for name in _value(body, NAMES_LABEL).split(", "):
                    if name and name not in current.names:
                        current.names.append(name)
            elif body.startswith(ERROR_LABEL) and not current.outcome:
                current.outcome = "error: " + _value(body, ERROR_LABEL)
        elif not raw.startswith(" "):
            current = None if not raw.startswith("- ") else current
    if marker:
        lines = [ln.strip() for ln in prefix.split("\n")]
        request = ""
        run = RunLine([chunk_id], "", continued=True, in_progress=True)
        for i, line in enumerate(lines):
            if line == ORIGINAL_REQUEST_LABEL:
                nxt = next((ln for ln in lines[i + 1 :] if ln), "")
                request = (
                    collapse_whitespace(nxt.removeprefix("- ")) if nxt.startswith("- ") else ""
                )
            elif line.startswith("- " + EDITED_LABEL):
                for path in _value(line, EDITED_LABEL).split(", "):
                    if path and path not in run.edits:
                        run.edits.append(path)
        if request:
            run.request = request
            out.append(run)
    return out


def fold_lines(chunk_id: str, summary: str) -> list[str]:
    """The Rolling Summary lines one pushed-out chunk contributes (one per run, each bounded)."""
    return _rendered(_fold_runs(chunk_id, summary))


def _fold_runs(chunk_id: str, summary: str) -> list[RunLine]:
    runs = run_lines(chunk_id, summary)
    if runs:
        return runs
    lines = [collapse_whitespace(ln) for ln in normalize_summary(summary).split("\n") if ln.strip()]
    text = " / ".join(lines[:12])
    return [RunLine([chunk_id], text or "(no summary)")]


def _rendered(runs: Sequence[RunLine]) -> list[str]:
    return [run.render(newest=n == len(runs) - 1) for n, run in enumerate(runs)]


def _merged(chunks: Sequence[tuple[str, str]]) -> list[RunLine]:
    out: list[RunLine] = []
    for chunk_id, summary in chunks:
        for run in _fold_runs(chunk_id, summary):
            if out and run.continued and run.request == out[-1].request:
                out[-1].absorb(run)
            else:
                out.append(run)
    return out


def _bounded_entry(chunk_id: str, summary: str, max_summary_tokens: int | None) -> str:
    """render_entry, its summary cut until the entry fits entry_budget (only a summary of many
    very short lines, or one over budget, is ever cut)."""
    entry = render_entry(chunk_id, summary)
    if max_summary_tokens is None:
        return entry
    budget = entry_budget(max_summary_tokens)
    body = normalize_summary(summary)
    allowed = max_summary_tokens
    while estimate_tokens(entry) > budget and allowed > 0:
        entry = render_entry(chunk_id, fit_tokens(body, allowed))
        allowed = allowed * 9 // 10 if allowed > 10 else allowed - 1
    return entry


def cap_rolling(lines: list[str], max_lines: int) -> tuple[list[str], int]:
    """The newest lines that fit with the marker; returns (lines, dropped)."""
    if len(lines) <= max_lines:
        return list(lines), 0
    keep = max_lines - 1
    dropped = len(lines) - keep
    return [truncation_marker(dropped), *lines[len(lines) - keep :]], dropped


def file_record_lines(files: object, max_rolling_summary_lines: int) -> list[str]:
    """The `[files]` lines of the newest entry's file record (its `files` field, see
    core.compaction.filerecord), within the share of the Rolling Summary's cap they may take."""
    return record_lines(record_from_extra(files), record_room(max_rolling_summary_lines))


def render_summary(
    chunks: Sequence[tuple[str, str]],
    *,
    summary_max_chunks: int,
    max_rolling_summary_lines: int,
    max_summary_tokens: int | None = None,
    files: object = None,
) -> RenderedSummaries:
    """summary.md and summary_archive.md from [(chunk_id, summary)], oldest first; with
    max_summary_tokens, summary.md stays within `summary_md_bound_for(...)`. `files`: the
    newest index entry's file record (its `files` field), shown as the Rolling Summary's last
    lines and counted in its cap."""
    if summary_max_chunks < 1:
        raise ValueError("summary_max_chunks must be ≥ 1")
    if max_rolling_summary_lines < 2:
        raise ValueError("max_rolling_summary_lines must be ≥ 2")
    if not chunks:
        return RenderedSummaries("", "", [], [], [], 0, 0)
    split = max(0, len(chunks) - summary_max_chunks)
    archived, recent = list(chunks[:split]), list(chunks[split:])

    record = file_record_lines(files, max_rolling_summary_lines)
    folded = _rendered(_merged(archived))
    rolling, dropped = cap_rolling(folded, max_rolling_summary_lines - len(record))
    rolling = [*rolling, *record]

    parts = [TITLE, "", ROLLING_HEADING, ""]
    if rolling:
        parts.extend([*rolling, ""])
    parts.extend([RECENT_HEADING, ""])
    parts.append("\n\n".join(_bounded_entry(cid, text, max_summary_tokens) for cid, text in recent))
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


# --------------------------------------------------------------------------- incremental render


@dataclass(frozen=True)
class FoldStat:
    """What one chunk adds to the Rolling Summary's folded lines (before the cap), computed
    once per chunk so that summary.md can be rendered from a bounded window of chunks.

    `lines`: new lines it starts; `merges_first`: its first run continues the line before it
    (a split turn); `last_request`: the request of its last run (what the next chunk's first
    run must equal to merge), or None."""

    lines: int
    merges_first: bool
    last_request: str | None


def fold_stat(chunk_id: str, summary: str, previous_request: str | None) -> FoldStat:
    """The FoldStat of a chunk folded after a chunk whose last run asked `previous_request`.

    Merging in `_merged` compares a continued run with the line before it, whose request is
    that of its own last run, so the rule is local: a run merges iff it is continued and its
    request equals the previous run's."""
    lines = 0
    merges_first = False
    prev = previous_request
    for i, (continued, request) in enumerate(_run_requests(chunk_id, summary)):
        merges = continued and prev is not None and request == prev
        if merges and i == 0:
            merges_first = True
        if not merges:
            lines += 1
        prev = request
    return FoldStat(lines, merges_first, prev)


def _run_requests(chunk_id: str, summary: str) -> list[tuple[bool, str]]:
    """(continued, request) of each run `_fold_runs` gives, without the paths and outcomes
    (what merging depends on; a catalog rebuild folds every chunk of a long session)."""
    history, marker, prefix = _split_at_marker(normalize_summary(summary))
    out: list[tuple[bool, str]] = []
    for raw in history.split("\n"):
        if raw.startswith("- "):
            body = raw.strip().removeprefix("- ")
            if body.startswith(REQUEST_LABEL):
                out.append((False, _value(body, REQUEST_LABEL)))
            elif body.startswith(CONTINUED_LABEL):
                out.append((True, _value(body, CONTINUED_LABEL)))
    if marker:
        lines = [ln.strip() for ln in prefix.split("\n")]
        request = ""
        for i, line in enumerate(lines):
            if line == ORIGINAL_REQUEST_LABEL:
                nxt = next((ln for ln in lines[i + 1 :] if ln), "")
                request = (
                    collapse_whitespace(nxt.removeprefix("- ")) if nxt.startswith("- ") else ""
                )
        if request:
            out.append((True, request))
    if not out:
        return [(False, run.request) for run in _fold_runs(chunk_id, summary)]
    return out


def render_summary_md_window(
    count: int,
    chunk_at: Callable[[int], tuple[str, str]],
    lines_of: Callable[[int], int],
    folded_total: int,
    *,
    summary_max_chunks: int,
    max_rolling_summary_lines: int,
    max_summary_tokens: int | None = None,
    files: object = None,
) -> str:
    """summary.md for `count` chunks, byte-identical to `render_summary(...).summary_md`,
    reading only the chunks it needs: the Recent Chunks and, walking back from the newest
    pushed-out chunk, as many as cover the Rolling Summary lines the cap keeps.

    `chunk_at(i)` gives (chunk_id, summary) of chunk i (0-based), `lines_of(i)` its
    `fold_stat(...).lines`, and `folded_total` the sum of `lines_of` over the pushed-out
    chunks (the folded line count before the cap)."""
    if summary_max_chunks < 1:
        raise ValueError("summary_max_chunks must be ≥ 1")
    if max_rolling_summary_lines < 2:
        raise ValueError("max_rolling_summary_lines must be ≥ 2")
    if count <= 0:
        return ""
    record = file_record_lines(files, max_rolling_summary_lines)
    max_rolling_summary_lines -= len(record)
    split = max(0, count - summary_max_chunks)
    if folded_total <= max_rolling_summary_lines:
        first = 0
        need = folded_total
    else:
        need = max_rolling_summary_lines - 1
        first, covered = split, 0
        while first > 0 and covered < need:
            first -= 1
            covered += lines_of(first)
    window = [chunk_at(i) for i in range(first, split)]
    folded = _rendered(_merged(window))
    if first > 0 or len(folded) != need:
        # The window starts inside the history: its first line may stand for a line begun
        # before it, so only the newest `need` lines are exact (and the cap keeps only those).
        folded = folded[len(folded) - need :] if need else []
    if folded_total > max_rolling_summary_lines:
        dropped = folded_total - need
        rolling = [truncation_marker(dropped), *folded]
    else:
        rolling = folded
    rolling = [*rolling, *record]
    parts = [TITLE, "", ROLLING_HEADING, ""]
    if rolling:
        parts.extend([*rolling, ""])
    parts.extend([RECENT_HEADING, ""])
    recent = [chunk_at(i) for i in range(split, count)]
    parts.append("\n\n".join(_bounded_entry(cid, text, max_summary_tokens) for cid, text in recent))
    return "\n".join(parts) + "\n"


def archive_entry_bytes(chunk_id: str, summary: str, *, first: bool) -> bytes:
    """What pushing one chunk out adds to summary_archive.md: the whole file's start (title)
    for the first chunk pushed out, else a blank line and the entry (contract §7: appended)."""
    entry = render_entry(chunk_id, summary)
    text = f"{ARCHIVE_TITLE}\n\n{entry}\n" if first else f"\n{entry}\n"
    return text.encode("utf-8")
