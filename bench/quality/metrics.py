"""What the quality harness measures, as pure functions over events and summary text.

These definitions are the harness's own (docs/QUALITY.md states them); they do not call the
summarizer or reuse its parsing, so a figure measures the summaries instead of echoing how
they were made. Only `core.tokens.estimate_tokens` is shared, because the budgets are stated
in its units.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.compaction.runs import SPLIT_TURN_MARKER as SPLIT_MARKER
from core.compaction.runs import SUMMARY_LABELS as SUMMARY_LABELS  # the noise check reads them here
from core.tokens import estimate_tokens

Event = Mapping[str, Any]

REQUEST_PREFIX_CHARS = 40
ARGUMENT_VALUE_CHARS = 200
"""Only the first characters of a tool-call argument count as what the agent "used": a
200-character command line or path is used; a whole file body passed to `write` is not said."""

EDIT_TOOLS = frozenset(
    {
        "edit",
        "write",
        "create",
        "edit_file",
        "write_file",
        "create_file",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "apply_patch",
        "multiedit",
        "multi_edit",
        "replace_in_file",
    }
)
SHELL_TOOLS = frozenset({"bash", "shell", "run_command", "exec", "terminal", "sh"})
PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "target", "notebook_path")
SAID_TYPES = frozenset({"user_input", "assistant_output", "role_output"})


def collapse(text: str) -> str:
    """Whitespace runs become one space: summary.md indents and rewraps, which is not a change
    of wording."""
    return " ".join(text.split())


def event_text(event: Event) -> str:
    content = event.get("content")
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return str(content)


def is_synthetic(event: Event) -> bool:
    meta = event.get("meta")
    return isinstance(meta, Mapping) and meta.get("synthetic") is not None


def is_request(event: Event) -> bool:
    return event.get("type") == "user_input" and not is_synthetic(event)


# --- requests --------------------------------------------------------------------------------


def request_key(event: Event) -> str:
    """The first 40 characters of a request (whitespace collapsed)."""
    return collapse(event_text(event))[:REQUEST_PREFIX_CHARS]


def named_fraction(keys: Sequence[str], summary_md: str) -> float | None:
    """Share of `keys` found verbatim (whitespace collapsed) in summary.md; None when there is
    nothing to find."""
    wanted = [k for k in keys if k]
    if not wanted:
        return None
    hay = collapse(summary_md)
    return sum(1 for k in wanted if collapse(k) in hay) / len(wanted)


# --- edited paths ----------------------------------------------------------------------------

_FILEISH = re.compile(r"^[\w./~-]*[\w-]\.[A-Za-z0-9]{1,8}$|^[\w.~-]*(?:/[\w.-]+)+$")


def _fileish(token: str) -> bool:
    return bool(_FILEISH.match(token)) and token not in ("/dev/null",) and not token[0].isdigit()


def shell_edited_paths(command: str) -> list[str]:
    """Files a shell command writes, as written in it: `sed -i … FILE`, `> FILE`, `>> FILE`,
    `tee FILE`, `cat <<EOF > FILE`. Only the first line of a heredoc command is read."""
    out: list[str] = []
    for segment in re.split(
        r"&&|\|\||;|\n", command.split("\n", 1)[0] if "<<" in command else command
    ):
        try:
            words = shlex.split(segment, posix=True)
        except ValueError:
            words = segment.split()
        if not words:
            continue
        in_place = any(w.startswith("-i") or w == "--in-place" for w in words)
        if words[0] == "sed" and in_place and _fileish(words[-1]):
            out.append(words[-1])
        if words[0] == "tee":
            out.extend(w for w in words[1:] if not w.startswith("-") and _fileish(w))
        for i, w in enumerate(words):
            if w in (">", ">>") and i + 1 < len(words) and _fileish(words[i + 1]):
                out.append(words[i + 1])
            elif (w.startswith(">") and not w.startswith(">&")) and _fileish(w.lstrip(">")):
                out.append(w.lstrip(">"))
    return out


def edited_paths(event: Event) -> list[str]:
    """Paths a tool call edits, whole, as the agent wrote them; an absolute path under the
    working directory the event names (`meta.cwd`) is taken relative to it (summaries may
    write it so, and the relative form is part of the absolute one)."""
    if event.get("type") != "tool_call":
        return []
    name = str(event.get("name") or "").lower()
    args = event.get("arguments")
    if not isinstance(args, Mapping):
        return []
    found: list[str] = []
    if name in EDIT_TOOLS:
        found = [str(args[k]) for k in PATH_KEYS if isinstance(args.get(k), str) and args[k]]
    elif name in SHELL_TOOLS:
        command = args.get("command", args.get("cmd"))
        if isinstance(command, str):
            found = shell_edited_paths(command)
    meta = event.get("meta")
    cwd = meta.get("cwd") if isinstance(meta, Mapping) else None
    if isinstance(cwd, str) and cwd.startswith("/"):
        root = cwd.rstrip("/") + "/"
        found = [p[len(root) :] if p.startswith(root) and len(p) > len(root) else p for p in found]
    return found


# --- identifiers -----------------------------------------------------------------------------

_IDENT_PATTERNS = [
    r"https?://[^\s)\"'>\]]+",
    r"(?:~|\.{1,2})?/?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+",  # paths with a slash
    r"\b[A-Za-z0-9_-]+\.(?:py|ts|tsx|js|mjs|cjs|json|jsonl|md|yaml|yml|toml|txt|sh|cfg|ini|rs|go)\b",
    r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b",  # snake_case
    r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b",  # SCREAMING_CASE
    r"\b[a-z]+(?:[A-Z][a-z0-9]*)+\b",  # camelCase
    r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b",  # PascalCase
    r"\b[A-Z][A-Z0-9]+-\d+\b",  # ticket ids: PI-1187
    r"#[1-9]\d{1,5}\b",  # issue numbers: #412 (not a colour such as #008800)
    r"\b[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_.]*\b",  # a.b.c
]
_IDENT_RE = re.compile("|".join(f"(?:{p})" for p in _IDENT_PATTERNS), re.ASCII)
_HASHLIKE = re.compile(r"^[0-9a-f]{7,}$")
_NAME_CHAR = re.compile(r"[A-Za-z0-9_-]")
"""A character that continues a name: a match right after one is a fragment of a longer name."""
_CUT_TAIL = re.compile(r"[A-Za-z0-9_.~/-]+$")


def identifiers(text: str) -> set[str]:
    """Distinctive names in text: paths, file names, snake/camel/Pascal/SCREAMING case, ticket
    and issue ids, URLs, dotted names with two dots. Not plain words, numbers, coordinates
    or hashes."""
    out: set[str] = set()
    for m in _IDENT_RE.finditer(text):
        if m.start() > 0 and _NAME_CHAR.match(text[m.start() - 1]):
            continue  # a fragment: `text.test.ts` in `truncated-text.test.ts`
        tok = m.group(0).rstrip(".,:;")
        wordless = not re.search(r"[A-Za-z]", tok) and not tok.startswith("#")
        if len(tok) < 4 or _HASHLIKE.match(tok) or wordless:
            continue
        out.add(tok)
    return out


def _argument_strings(value: Any, limit: int | None = ARGUMENT_VALUE_CHARS) -> Iterable[str]:
    """Every string in a tool call's arguments, nested ones too, each cut to `limit`
    characters (None: whole)."""
    if isinstance(value, str):
        if limit is None or len(value) <= limit:
            yield value
        elif _NAME_CHAR.match(value[limit]):
            yield _CUT_TAIL.sub("", value[:limit])  # a name the cut splits is not used whole
        else:
            yield value[:limit]
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _argument_strings(v, limit)
    elif isinstance(value, list):
        for v in value:
            yield from _argument_strings(v, limit)


def said_identifiers(event: Event) -> set[str]:
    """Identifiers the user or agent said (their message text) or used (tool-call arguments,
    each value's first 200 characters); nothing from tool results or system events."""
    if is_synthetic(event):
        return set()
    etype = event.get("type")
    if etype in SAID_TYPES:
        return identifiers(event_text(event))
    if etype == "tool_call":
        found: set[str] = set()
        for s in _argument_strings(event.get("arguments")):
            found |= identifiers(s)
        found.update(edited_paths(event))
        return found
    return set()


def kept_fraction(items: Iterable[str], text: str) -> float | None:
    wanted = set(items)
    if not wanted:
        return None
    return sum(1 for w in wanted if w in text) / len(wanted)


# --- mechanics -------------------------------------------------------------------------------


@dataclass(frozen=True)
class IdCheck:
    lost: list[str]
    doubled: list[str]
    unexpected: list[str]


def check_ids(expected: Iterable[str], located: Iterable[str]) -> IdCheck:
    """Every appended id must be found exactly once across the hot window and chunk files."""
    counts = Counter(located)
    want = list(expected)
    wanted = set(want)
    return IdCheck(
        lost=[i for i in want if counts[i] == 0],
        doubled=[i for i in want if counts[i] > 1],
        unexpected=sorted(i for i in counts if i not in wanted),
    )


def split_tool_pairs(places: Mapping[str, Sequence[Event]]) -> list[str]:
    """tool_call_ids whose call and result live in different places (the hot window, or
    different chunks). A call whose result never came is not a pair."""
    calls: dict[str, str] = {}
    results: dict[str, str] = {}
    for place, events in places.items():
        for e in events:
            tid = e.get("tool_call_id")
            if not isinstance(tid, str):
                continue
            if e.get("type") == "tool_call":
                calls.setdefault(tid, place)
            elif e.get("type") == "tool_result":
                results.setdefault(tid, place)
    return sorted(t for t, place in calls.items() if t in results and results[t] != place)


# --- summaries -------------------------------------------------------------------------------

_TYPE_TAG = re.compile(r"\((?:system_event|system|summary|compaction)\)\s*-?\s*")


def learned_labels(summaries: Iterable[str]) -> set[str]:
    """Labels the summaries themselves use: a line that is only `Words:` (≤ 5 words)."""
    found: set[str] = set()
    for s in summaries:
        for line in s.splitlines():
            t = line.strip().lstrip("-#* ").strip()
            if t.endswith(":") and 1 <= len(t[:-1].split()) <= 5 and t[0].isupper():
                found.add(t)
    return found


def nested_line(line: str, labels: Iterable[str]) -> bool:
    """A line carries an earlier summary inside it: a type tag of a summary-bearing event right
    before a label, or a label in mid-line that opens a flattened bullet list (`Label: - …`)."""
    body = line.strip().lstrip("-*# ").strip()
    for m in _TYPE_TAG.finditer(body):
        rest = body[m.end() :]
        if any(rest.startswith(label) for label in labels):
            return True
    for label in labels:
        start = 1
        while True:
            i = body.find(label, start)
            if i < 0:
                break
            after = body[i + len(label) :].lstrip()
            if after.startswith("- ") or (after == "" and i > 0):
                return True
            start = i + 1
    return False


TURN_PREFIX_LABELS = ("Original request:", "Early progress:", "Context for the retained suffix:")
"""Labels of a split turn's prefix summary: they belong after the split-turn marker, once."""


def nested_in_chunk_summary(summary: str, labels: Iterable[str]) -> bool:
    """A chunk summary is nested when it holds the split-turn marker more than once, when a
    turn-prefix label appears in its history part (an earlier synthetic event summarised with
    its labels) or twice in its prefix part, or when any of its lines is nested."""
    if summary.count(SPLIT_MARKER) > 1:
        return True
    history, _, prefix = summary.partition(SPLIT_MARKER)
    for label in TURN_PREFIX_LABELS:
        if label in history or prefix.count(label) > 1:
            return True
    return any(nested_line(line, labels) for line in summary.splitlines())


def rolling_lines(summary_md: str) -> list[str]:
    """The Rolling Summary section's lines of summary.md."""
    lines = summary_md.splitlines()
    out: list[str] = []
    inside = False
    for line in lines:
        if line.startswith("## "):
            inside = line.strip() == "## Rolling Summary"
            continue
        if inside and line.strip():
            out.append(line)
    return out


def nested_rolling(summary_md: str, labels: Iterable[str]) -> list[str]:
    """Rolling Summary lines that carry an earlier summary (or the split-turn marker) inside."""
    labels = list(labels)
    return [
        line
        for line in rolling_lines(summary_md)
        if nested_line(line, labels) or SPLIT_MARKER in line.strip().lstrip("-* ")[1:]
    ]


def over_budget(summaries: Mapping[str, str], max_tokens: int) -> list[str]:
    """Chunk ids whose summary's estimate exceeds max_summary_tokens."""
    return sorted(cid for cid, s in summaries.items() if estimate_tokens(s) > max_tokens)


_COORDS = re.compile(
    r"\(\s*\d{2,4}\s*,\s*\d{2,4}\s*\)"  # (540, 1210)
    r"|\bx\W{1,3}\d{2,4}\W{1,4}y\W{1,3}\d{2,4}"  # x=540, y=1210 / "x": 540, "y": 1210
)
_HASH = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b")


def noise_count(text: str) -> int:
    """Screen coordinates and hex hashes in a summary: numbers no model continues from."""
    return len(_COORDS.findall(text)) + len(_HASH.findall(text))


# --- recall ----------------------------------------------------------------------------------


def full_text(event: Event) -> str:
    """All searchable text of an event: content, name and arguments."""
    parts = [event_text(event), str(event.get("name") or "")]
    args = event.get("arguments")
    if args is not None:
        parts.extend(_argument_strings(args, None))
    return "\n".join(parts)


def unique_identifiers(chunks: Mapping[str, Sequence[Event]]) -> dict[str, str]:
    """Said/used identifiers that occur (case-insensitively, as a substring of any event's
    text) in exactly one chunk's events: identifier -> that chunk."""
    texts = {cid: "\n".join(full_text(e) for e in evs).lower() for cid, evs in chunks.items()}
    candidates: set[str] = set()
    for evs in chunks.values():
        for e in evs:
            candidates |= said_identifiers(e)
    out: dict[str, str] = {}
    for ident in sorted(candidates):
        low = ident.lower()
        where = [cid for cid, text in texts.items() if low in text]
        if len(where) == 1:
            out[ident] = where[0]
    return out


def ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-quantile (0 ≤ q ≤ 1) of `values` by linear interpolation; None when empty."""
    if not values:
        return None
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
