"""The session's file record: every file the agent modified (and, space allowing, read), kept
across every pass (pure; no I/O).

A chunk's summary names the files its runs edited, and the Rolling Summary line a pushed-out
chunk folds to names as many as fit; the record is what keeps *every* modified file named in
summary.md however many passes went by, as pi's `<modified-files>` / `<read-files>` do.

- Stored: each index entry carries the record as it stands after its chunk, under the extra
  field `files` (contract §6 allows extra fields):

      files:
        cwd: /home/dev/project      # when the events name one (meta.cwd); paths are relative to it
        modified: [src/a.py, ...]   # least recently modified first, at most MAX_MODIFIED
        read: [docs/x.md, ...]      # files only read, least recently first, at most MAX_READ
        modified_total: 12          # how many distinct files were ever modified
        read_total: 30

  So summary.md is re-rendered from the newest entry alone (`update_record` folds a chunk's
  events into the previous entry's record).
- Shown: `record_lines` writes it as Rolling Summary lines labelled `[files]`, each within the
  Rolling Summary's line bound; they count in `max_rolling_summary_lines` (see `record_room`),
  so summary.md's bound does not change. Modified files come first, all of them while the
  room lasts (sorted, so a directory's files stand together); read files take what is left,
  at most a quarter of the room; then `[names]` lines: the runs' key identifiers
  (core.summarizer.extractive.run_names) that the folded lines have no room for, the newest
  that fit in what room the files leave (at most half of it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.compaction.runs import split_runs
from core.events import Event
from core.redact import redact_secrets
from core.text import collapse_whitespace
from core.tokens import estimate_tokens, fit_tokens

FILES_KEY = "files"
"""The index entry's extra field that holds the record."""
RECORD_LABEL = "[files]"
MAX_MODIFIED = 100
"""Modified files an entry keeps (the least recently modified go first beyond it)."""
MAX_READ = 24
"""Files only read that an entry keeps."""
MAX_NAMES = 160
"""Key identifiers an entry keeps (the least recently named go first beyond it)."""
NAMES_LABEL = "[names]"
LINE_TOKENS = 80
"""A record line's bound: the Rolling Summary's (core.compaction.summaries.ROLLING_LINE_TOKENS)."""


@dataclass
class FileRecord:
    modified: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    cwd: str | None = None
    modified_total: int = 0
    read_total: int = 0
    names: list[str] = field(default_factory=list)
    """The runs' key identifiers (core.summarizer.extractive.run_names), least recent first."""

    def to_extra(self) -> dict[str, Any] | None:
        """The entry's `files` value; None when the record is empty (the field is left out)."""
        if not (self.modified or self.read or self.names):
            return None
        out: dict[str, Any] = {}
        if self.cwd:
            out["cwd"] = self.cwd
        out["modified"] = list(self.modified)
        out["read"] = list(self.read)
        out["modified_total"] = max(self.modified_total, len(self.modified))
        out["read_total"] = max(self.read_total, len(self.read))
        if self.names:
            out["names"] = list(self.names)
        return out


def _strings(value: Any, cap: int) -> list[str]:
    out: list[str] = []
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str) and item.strip() and item not in out:
                out.append(collapse_whitespace(item)[:300])
    return out[-cap:]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def record_from_extra(value: Any) -> FileRecord | None:
    """The record an index entry carries (its `files` field), read leniently (a hand-edited
    or foreign value gives what makes sense, never an error); None when there is none."""
    if not isinstance(value, Mapping):
        return None
    cwd = value.get("cwd")
    modified = _strings(value.get("modified"), MAX_MODIFIED)
    read = [p for p in _strings(value.get("read"), MAX_READ) if p not in modified]
    return FileRecord(
        modified,
        read,
        collapse_whitespace(cwd)[:300] if isinstance(cwd, str) and cwd.strip() else None,
        max(_count(value.get("modified_total")), len(modified)),
        max(_count(value.get("read_total")), len(read)),
        [n for n in _strings(value.get("names"), MAX_NAMES) if len(n) <= 80],
    )


def _touch(items: list[str], item: str) -> bool:
    """Move item to the end (most recent); True when it is new."""
    new = item not in items
    if not new:
        items.remove(item)
    items.append(item)
    return new


def _pathish(text: str) -> bool:
    """A read target that is a file path (not a search query or URL)."""
    return (
        bool(text)
        and " " not in text
        and "://" not in text
        and ("/" in text or "." in text.strip("."))
        and not any(c in text for c in "*?[]{}|^$\\")
    )


def update_record(
    previous: FileRecord | None,
    events: Sequence[Event],
    mask: Callable[[str], str] | None = None,
) -> FileRecord:
    """The record after a chunk of `events`, folded into the previous entry's record; `mask`
    (core.redact.redact_secrets with `redact_secrets` on) is applied to every new path, so no
    key written into a file name reaches summary.md."""
    from core.summarizer.extractive import run_names

    record = FileRecord(
        list(previous.modified) if previous else [],
        list(previous.read) if previous else [],
        previous.cwd if previous else None,
        previous.modified_total if previous else 0,
        previous.read_total if previous else 0,
        list(previous.names) if previous else [],
    )
    keep: Callable[[str], str] = mask or (lambda text: text)
    for run in split_runs(events):
        if run.cwd and not record.cwd:
            record.cwd = keep(run.cwd)
        for path in map(keep, run.edits):
            if _touch(record.modified, path):
                record.modified_total += 1
            if path in record.read:
                record.read.remove(path)
        for path in map(keep, run.reads):
            if path in record.modified or not _pathish(path):
                continue
            if _touch(record.read, path):
                record.read_total += 1
        for name in map(keep, run_names(run)):
            if name not in record.modified:
                _touch(record.names, name)
    record.modified = record.modified[-MAX_MODIFIED:]
    record.read = record.read[-MAX_READ:]
    record.names = record.names[-MAX_NAMES:]
    return record


def next_files(previous: object, events: Sequence[Event], *, redact: bool) -> dict[str, Any] | None:
    """The `files` value of the entry that compacts `events`: the previous entry's record
    (`previous`, its raw `files` value) with these events folded in, new paths masked when
    `redact` (the config's `redact_secrets`). The one rule a pass and recovery both follow."""
    mask = redact_secrets if redact else None
    return update_record(record_from_extra(previous), events, mask).to_extra()


def record_room(max_rolling_summary_lines: int) -> int:
    """Rolling Summary lines the record may take: a third of them, leaving the marker and one
    folded line (none below three lines)."""
    if max_rolling_summary_lines < 3:
        return 0
    return min(max_rolling_summary_lines // 3, max_rolling_summary_lines - 2)


def _pack(
    label: str, paths: Sequence[str], max_lines: int, more_note: str, earlier: int = 0
) -> list[str]:
    """`[files] <label>: a, b, …` lines of at most LINE_TOKENS, every path whole; when they do
    not all fit, the newest (last) paths are kept and the last line counts the rest."""
    if max_lines <= 0 or not paths:
        return []
    head = f"{RECORD_LABEL} {label}: "

    def lines_for(items: Sequence[str], note: str) -> list[str]:
        out = _wrap(head, sorted(items))
        if note:
            if out and estimate_tokens(f"{out[-1]} {note}") <= LINE_TOKENS:
                out[-1] = f"{out[-1]} {note}"
            else:
                out.append(head + note)
        return out

    def attempt(keep: int) -> list[str]:
        dropped = len(paths) - keep + earlier
        note = more_note.format(n=dropped) if dropped else ""
        return lines_for(paths[len(paths) - keep :], note)

    whole = attempt(len(paths))
    if len(whole) <= max_lines:
        return whole
    # Fewer paths never take more lines: the most that fit, by bisection.
    best = [head + more_note.format(n=len(paths) + earlier)]
    return _most_that_fit(attempt, len(paths) - 1, max_lines, best)[:max_lines]


def record_lines(record: FileRecord | None, max_lines: int) -> list[str]:
    """The record as `[files]` lines, then `[names]` lines in what room is left (at most a
    third of it), at most max_lines (see the module docstring)."""
    if record is None or max_lines <= 0:
        return []
    out = _file_lines(record, max_lines)
    left = max_lines - len(out)
    names_room = min(left, max(1, max_lines // 2)) if record.names else 0
    if names_room > 0:
        out.extend(_pack_names(record.names, names_room))
    return out[:max_lines]


def _pack_names(names: Sequence[str], max_lines: int) -> list[str]:
    """`[names] a, b, …` lines of the newest names that fit (found by bisection: fewer names
    never take more lines), sorted, each whole."""
    head = f"{NAMES_LABEL} "

    def lines_for(count: int) -> list[str]:
        return _wrap(head, sorted(names[len(names) - count :], key=str.lower))

    return _most_that_fit(lines_for, len(names), max_lines, [])


def _wrap(head: str, items: Sequence[str]) -> list[str]:
    """The items, in the order given, as `head a, b, …` lines of at most LINE_TOKENS each; an
    item too long for a line on its own is shortened (fit_tokens)."""
    out: list[str] = []
    line = ""
    for raw in items:
        item = fit_tokens(raw, LINE_TOKENS - estimate_tokens(head) - 1)
        candidate = f"{line}, {item}" if line else head + item
        if line and estimate_tokens(candidate) > LINE_TOKENS:
            out.append(line)
            line = head + item
        else:
            line = candidate
    if line:
        out.append(line)
    return out


def _most_that_fit(
    lines_for: Callable[[int], list[str]], high: int, max_lines: int, best: list[str]
) -> list[str]:
    """lines_for(n) for the largest n in 1..high whose lines number at most max_lines, found by
    bisection (fewer items never take more lines); best when not even n=1 fits."""
    low = 1
    while low <= high:
        mid = (low + high) // 2
        lines = lines_for(mid)
        if len(lines) <= max_lines:
            best, low = lines, mid + 1
        else:
            high = mid - 1
    return best


def _file_lines(record: FileRecord, max_lines: int) -> list[str]:
    if not (record.modified or record.read):
        return []
    out: list[str] = []
    if record.cwd and max_lines >= 2:
        out.append(fit_tokens(f"{RECORD_LABEL} paths relative to: {record.cwd}", LINE_TOKENS))
    earlier_mod = max(0, record.modified_total - len(record.modified))
    room = max_lines - len(out)
    read_room = max(1, room // 4) if record.read else 0
    mod_room = room - read_room if record.read and room > 1 else room
    out.extend(
        _pack(
            "modified",
            record.modified,
            mod_room,
            "(+{n} more modified earlier: summary_archive.md, recall)",
            earlier_mod,
        )
    )
    left = max_lines - len(out)
    earlier_read = max(0, record.read_total - len(record.read))
    out.extend(_pack("read", record.read, min(left, read_room), "(+{n} more read)", earlier_read))
    return out[:max_lines]
