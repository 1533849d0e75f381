"""What a pass dropped: the facts in a chunk that neither summary.md nor the hot window carried
after it (pure; core.timeline finds the texts).

Facts are taken from the chunk's events, by kind, ranked in this order of kinds:

- `constraint`: the user's constraints and decisions, a sentence of a user event with "never",
  "must", "don't", "do not", "always", "should not", "avoid", "only …" or "use X instead of Y";
- `error`: a line with an error word (error, exception, traceback, failed, fatal, denied,
  not found, …), cut to 200 characters;
- `path`: file paths and file names;
- `identifier`: code names, URLs, issue ids (core.compaction.runs.extract_identifiers, paths aside);
- `number`: numbers with a unit (250 ms, 3.5 GB, 80%, 10k tokens …).

A fact is *carried* when what followed the pass holds it: a path, identifier or number as a
substring (case-insensitive; a number also without the space before its unit), a constraint or
an error line when at least 60% of its significant words (4+ letters, or holding a digit) are
among the words after. Within a kind, facts said by the user come first, then by how many
events hold them, then in order of appearance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.compaction.runs import extract_identifiers
from core.events import Event
from core.text import collapse_whitespace, event_text, sentences

KINDS = ("constraint", "error", "path", "identifier", "number")
CARRY_SHARE = 0.6
ERROR_LINE_MAX = 200

_CONSTRAINT_RE = re.compile(
    r"\b(never|must|mustn't|must not|don't|do not|always|should not|shouldn't|avoid|"
    r"only use|only|instead of|no longer)\b",
    re.I,
)
_ERROR_RE = re.compile(
    r"\b(error|errors|exception|traceback|failed|failure|fatal|panic|denied|errno|"
    r"not found|segfault|timed out|timeout)\b",
    re.I,
)
_UNITS = (
    r"ms|us|µs|ns|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|"
    r"[kKMGT]i?B|bytes?|B|kb|mb|gb|tb|%|px|pt|em|rem|tokens?|k|K|M|x|"
    r"°C|°F|rpm|Hz|kHz|MHz|GHz|mAh|mA|V|W|kW|dpi|fps|lines?|events?|chunks?|calls?|steps?"
)
_NUMBER_RE = re.compile(rf"(?<![\w.])(\d+(?:[.,]\d+)?)\s?({_UNITS})(?![\w])")
_FILE_EXT_RE = re.compile(
    r"\.(py|pyi|js|jsx|ts|tsx|md|rst|txt|log|json|jsonl|ya?ml|toml|ini|cfg|conf|env|sh|bash|"
    r"c|h|cc|cpp|hpp|rs|go|java|kt|rb|php|cs|swift|sql|csv|tsv|html?|css|scss|xml|lock|"
    r"png|jpe?g|gif|svg|pdf|zip|tar|gz|db|sqlite|apk|ipa)$",
    re.I,
)
_WORD_RE = re.compile(r"[\w./:-]+", re.U)


@dataclass
class Fact:
    kind: str
    text: str
    event_ids: list[str] = field(default_factory=list)
    from_user: bool = False
    order: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "events": len(self.event_ids),
            "event_ids": list(self.event_ids),
            "from_user": self.from_user,
        }


@dataclass
class DroppedReport:
    chunk_id: str
    facts_total: int
    dropped: list[Fact]
    carried: int
    sources: dict[str, Any] = field(default_factory=dict)

    def groups(self) -> dict[str, list[Fact]]:
        out: dict[str, list[Fact]] = {k: [] for k in KINDS}
        for fact in self.dropped:
            out[fact.kind].append(fact)
        return {k: v for k, v in out.items() if v}

    def to_json(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "facts": self.facts_total,
            "carried": self.carried,
            "dropped_count": len(self.dropped),
            "sources": dict(self.sources),
            "dropped": {k: [f.to_json() for f in v] for k, v in self.groups().items()},
        }


def _is_user(event: Event) -> bool:
    return event.get("type") == "user_input" or (
        event.get("type") not in {"assistant_output", "tool_call", "tool_result"}
        and event.get("role") == "user"
    )


def event_texts(event: Event) -> str:
    """The text of an event a fact can come from: content, name and arguments."""
    parts = [event_text(event.get("content"))]
    for key in ("name", "arguments"):
        if event.get(key) is not None:
            parts.append(event_text(event.get(key)))
    return "\n".join(p for p in parts if p)


def _is_path(ident: str) -> bool:
    if "://" in ident:
        return False
    return "/" in ident or "\\" in ident or _FILE_EXT_RE.search(ident) is not None


def facts_of(events: Sequence[Event]) -> list[Fact]:
    """Every fact of these events, one per (kind, normalised text), with the ids holding it."""
    found: dict[tuple[str, str], Fact] = {}
    order = 0

    def add(kind: str, text: str, eid: str | None, user: bool) -> None:
        nonlocal order
        text = text.strip()
        if len(text) < 2:
            return
        key = (kind, text.lower())
        fact = found.get(key)
        if fact is None:
            order += 1
            fact = Fact(kind, text, order=order)
            found[key] = fact
        if eid is not None and eid not in fact.event_ids:
            fact.event_ids.append(eid)
        fact.from_user = fact.from_user or user

    for event in events:
        eid = event.get("id") if isinstance(event.get("id"), str) else None
        text = event_texts(event)
        if not text:
            continue
        user = _is_user(event)
        if user:
            for sentence in sentences(text):
                if _CONSTRAINT_RE.search(sentence):
                    add("constraint", sentence[:ERROR_LINE_MAX], eid, True)
        for line in text.splitlines():
            if _ERROR_RE.search(line):
                add("error", collapse_whitespace(line)[:ERROR_LINE_MAX], eid, user)
        for ident in extract_identifiers(text):
            add("path" if _is_path(ident) else "identifier", ident, eid, user)
        for match in _NUMBER_RE.finditer(text):
            add("number", f"{match.group(1)} {match.group(2)}", eid, user)
    return list(found.values())


def _words(text: str) -> set[str]:
    return {w.strip(".,:;-/").lower() for w in _WORD_RE.findall(text)}


def _significant(text: str) -> list[str]:
    return [
        w
        for w in (x.strip(".,:;-/").lower() for x in _WORD_RE.findall(text))
        if len(w) >= 4 or any(c.isdigit() for c in w)
    ]


class Carrier:
    """What followed a pass (summary.md, the hot window), ready to be asked about facts."""

    def __init__(self, texts: Iterable[str]) -> None:
        joined = "\n".join(texts)
        self.lower = joined.lower()
        self.squeezed = re.sub(r"\s+", "", self.lower)
        self.words = _words(joined)

    def carries(self, fact: Fact) -> bool:
        text = fact.text.lower()
        if fact.kind in ("path", "identifier"):
            return text in self.lower
        if fact.kind == "number":
            return text in self.lower or text.replace(" ", "") in self.squeezed
        words = _significant(fact.text)
        if not words:
            return text in self.lower
        held = sum(1 for w in words if w in self.words)
        return held / len(words) >= CARRY_SHARE


def dropped_for(
    chunk_id: str, chunk_events: Sequence[Event], after_texts: Iterable[str]
) -> DroppedReport:
    """The facts of a chunk that `after_texts` (summary.md after the pass, the texts of the hot
    window after it) do not carry, ranked (see the module docstring)."""
    facts = facts_of(chunk_events)
    carrier = Carrier(after_texts)
    dropped = [f for f in facts if not carrier.carries(f)]
    rank = {k: i for i, k in enumerate(KINDS)}
    dropped.sort(key=lambda f: (rank[f.kind], not f.from_user, -len(f.event_ids), f.order))
    return DroppedReport(chunk_id, len(facts), dropped, len(facts) - len(dropped))


__all__ = ["KINDS", "Carrier", "DroppedReport", "Fact", "dropped_for", "event_texts", "facts_of"]
