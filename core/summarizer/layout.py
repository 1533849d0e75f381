"""The checkpoint layout and its bound: what is salient in event text (constraints, next
steps, focus keywords, prose without code) and how a summary is cut to its token budget
(items by priority, requests shortened in stages, never dropped)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.text import (
    CJK_LETTERS,
    clean_text,
    collapse_whitespace,
)
from core.tokens import estimate_tokens, fit_tokens

# --------------------------------------------------------------------------- salience helpers

CONSTRAINT_RE = re.compile(
    r"\b(must|mustn't|never|always|don't|do not|should|shouldn't|prefer|only|avoid|without|"
    r"make sure|no more than|at most|at least)\b"
    r"|必须|不要|别|只能|只用|请勿|务必|偏好|总是|禁止|不得|しないで|必ず|하지 마",
    re.IGNORECASE,
)
NEXT_RE = re.compile(
    r"\b(next|plan to|going to|still need|need to|then I|I will|I'll|"
    r"follow[- ]up|left to)\b|接下来|下一步|还需要|次に|다음",
    re.IGNORECASE,
)
"""The agent saying what it will do. Not "TODO"/"待办"/"remaining": those head lists in what
the agent wrote for the user (minutes, code), which are not its own next steps."""
LIST_ITEM_RE = re.compile(r"^\s*(?:[-*•]|\d+[.)、]|[一二三四五六七八九十]+、|[A-Za-z][.)])\s*")
_CODE_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_COMMENT_LINE_RE = re.compile(r"^\s*(?:#|//|/\*|\*|--|;|>|<!--|%)")
_STOPWORDS = frozenset(
    {"the", "and", "for", "with", "about", "from", "into", "keep", "focus", "are", "this"}
    | {"that", "please", "all", "any", "more", "less", "what", "how", "why", "when"}
)
_CJK_CHAR_RE = re.compile(f"[{CJK_LETTERS}]+")


def add_unique(items: list[str], item: str, cap: int) -> None:
    if item and item not in items and len(items) < cap:
        items.append(item)


def focus_keywords(focus: str) -> list[str]:
    """Lowercase words (≥ 3 chars, not stopwords) and CJK bigrams of the focus text."""
    text = collapse_whitespace(focus).lower()
    words = [w for w in re.findall(r"[^\W_][\w./-]*[^\W_]|[^\W_]", text) if w]
    keys: list[str] = []
    for word in words:
        if _CJK_CHAR_RE.fullmatch(word):
            continue
        if len(word) >= 3 and word not in _STOPWORDS:
            add_unique(keys, word, 50)
    for run in _CJK_CHAR_RE.findall(text):
        grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        for gram in grams:
            add_unique(keys, gram, 50)
    return keys


def prose(text: str) -> str:
    """The agent's or user's own prose: fenced code blocks and comment or quoted lines removed
    (so "Next Steps" never picks up a code comment or a pasted file)."""
    without_code = _CODE_FENCE_RE.sub(" ", clean_text(text))
    return "\n".join(ln for ln in without_code.split("\n") if not _COMMENT_LINE_RE.match(ln))


# --------------------------------------------------------------------------- layout + bounding

PINNED = 10_000
REQUEST_SHRINK = (75, 50, 30, 20, 12)
"""Estimated tokens a request is cut to, in turn, when the summary does not fit (by estimate,
so a CJK request gets as much room as its English translation)."""


@dataclass
class _Item:
    """One rendered line: `- text` (or `  text` under the run entry before it)."""

    section: str
    text: str
    priority: int
    order: int
    sub: bool = False
    full: str = ""
    """For pinned request lines: the whole request (`text` is `label + shortened request`)."""
    label: str = ""


@dataclass
class Doc:
    focus_keys: list[str]
    items: list[_Item] = field(default_factory=list)

    def add(
        self, section: str, text: str, priority: int, *, sub: bool = False, boost: int = 0
    ) -> None:
        text = text.rstrip()
        if not text:
            return
        if priority < PINNED:
            lowered = text.lower()
            if any(key in lowered for key in self.focus_keys):
                boost += 50
            priority = min(PINNED - 1, priority + boost)
        self.items.append(_Item(section, text, priority, len(self.items), sub))

    def pin_request(self, section: str, label: str, request: str, *, sub: bool = False) -> None:
        item = _Item(section, "", PINNED, len(self.items), sub, full=request, label=label)
        item.text = f"{label}{fit_tokens(request, REQUEST_SHRINK[0])}"
        self.items.append(item)


def _render(sections: Sequence[tuple[str, str]], items: list[_Item], always: frozenset[str]) -> str:
    by_section: dict[str, list[_Item]] = {}
    for item in items:
        by_section.setdefault(item.section, []).append(item)
    out: list[str] = []
    for key, heading in sections:
        body = sorted(by_section.get(key, []), key=lambda it: it.order)
        if not body and key not in always:
            continue
        out.append(heading)
        out.extend(f"  {it.text}" if it.sub else f"- {it.text}" for it in body)
    return "\n".join(out)


_STAGES = ((60, 0), (60, 1), (80, 1), (80, 2), (80, 3), (PINNED, 3), (PINNED, 4))
"""(drop lines below this priority, shrink requests to REQUEST_SHRINK[i]), tried in turn: a
request is shortened before the agent's edits are dropped, never dropped itself."""


def bounded(
    sections: Sequence[tuple[str, str]],
    items: list[_Item],
    always: frozenset[str],
    max_tokens: int,
) -> str:
    """Fit max_tokens: drop the lowest-priority lines (oldest first among equals) and shorten
    the pinned requests, in the stages above; then cut with "…". Never over max_tokens."""
    if max_tokens < 1:
        return ""
    kept = list(items)
    text = _render(sections, kept, always)
    for floor, shrink in _STAGES:
        if estimate_tokens(text) <= max_tokens:
            return text
        for item in kept:
            if item.full:
                item.text = f"{item.label}{fit_tokens(item.full, REQUEST_SHRINK[shrink])}"
        text = _render(sections, kept, always)
        if estimate_tokens(text) <= max_tokens:
            return text
        droppable = sorted(
            (it for it in kept if it.priority < floor), key=lambda it: (it.priority, it.order)
        )
        if not droppable:
            continue
        costs = {id(it): estimate_tokens(f"  - {it.text}\n") for it in droppable}
        total = estimate_tokens(text)
        dropped: set[int] = set()
        for item in droppable:
            if total <= max_tokens:
                break
            dropped.add(id(item))
            total -= costs[id(item)]
        kept = [it for it in kept if id(it) not in dropped]
        text = _render(sections, kept, always)
        # Per-line costs are estimates too: finish exactly, one line at a time.
        while estimate_tokens(text) > max_tokens and any(it.priority < floor for it in kept):
            victim = min(
                (it for it in kept if it.priority < floor), key=lambda it: (it.priority, it.order)
            )
            kept.remove(victim)
            text = _render(sections, kept, always)
    # More requests than the budget can name even shortened (a first pass over a long imported
    # session): the oldest give way to one line that counts them, so the newest stay whole.
    requests = sorted((it for it in kept if it.full and it.sub is False and it.label), key=_order)
    if estimate_tokens(text) > max_tokens and len(requests) > 1:
        over = estimate_tokens(text) - max_tokens + 20  # 20: the note line
        n, freed = 0, 0
        while n < len(requests) - 1 and freed < over:
            freed += estimate_tokens(f"- {requests[n].text}\n")
            n += 1
        while True:
            gone = {id(it) for it in requests[:n]}
            note = _Item(requests[0].section, "", PINNED, requests[0].order)
            note.text = f"({n} earlier requests in this range are in the chunk; recall finds them)"
            text = _render(sections, [note, *(it for it in kept if id(it) not in gone)], always)
            if estimate_tokens(text) <= max_tokens or n >= len(requests) - 1:
                break
            n += 1
    return fit_tokens(text, max_tokens)


def _order(item: _Item) -> int:
    return item.order
