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
    sentences,
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


FOLLOW_UP_RE = re.compile(
    r"^(?:ok(?:ay)?|yes|yep|yeah|no|nope|sure|thanks?|thank you|go on|go ahead|continue|"
    r"proceed|again|retry|try again|check again|do it|do that|please do|looks good|lgtm|next|"
    r"done|same|hmm+|and|so|well|still)\b"
    r"|^(?:继续|好的?|可以|再试|再检查|再看|是的?|行)",
    re.IGNORECASE,
)
NARRATION_RE = re.compile(
    r"^(?:let me|let's|let us|i'll|i will|i'm going to|i am going to|i need to|i'm|i am|"
    r"i've|i have|first\b|now\b|next\b|then\b|ok(?:ay)?\b|alright|great|sure|good|perfect|"
    r"done\b|adding|running|looking|checking|reading|searching|trying|starting|reproducing|"
    r"opening|viewing|here(?:'s| is| are)|this (?:is|will)|we (?:need|can) now)",
    re.IGNORECASE,
)
"""The agent saying what it is doing (status remarks), not what it decided or found."""
DECISION_RE = re.compile(
    r"\b(?:because|instead|rather than|decid|chose|choose|the (?:problem|cause|issue|bug|fix|"
    r"reason) (?:is|was)|root cause|so that|caused by|turns out|won't|will not|should not|"
    r"must not|not needed|not necessary|keep(?:s|ing)? |switch|revert|the right (?:fix|place)|"
    r"is (?:wrong|missing|broken|correct)|assum)",
    re.IGNORECASE,
)
LOG_LINE_RE = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d|\[?\d\d:\d\d(?::\d\d)?\b|\[\w*(?:INFO|WARN|ERROR|DEBUG)\w*\]|"
    r"(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL|NOTICE)\b[:\s]|at\s+\S+\s*\(|"
    r"File \"|Traceback|[\w.]+(?:Error|Exception|Warning):|npm (?:ERR|WARN)|E\s{2,}|\$ |>>> |"
    r"[{}\[\]]|\"[\w-]+\"\s*:|\w+=\S+\s+\w+=)",
    re.IGNORECASE,
)
"""A line of a log, trace or data the user pasted (not the user's own words)."""
_DOC_LINE_RE = re.compile(r"^\s*(?:#{1,6}\s|[-*•]\s|\d+[.)]\s|\|)")


def is_follow_up(request: str) -> bool:
    """A short follow-up ("check again", "continue", "ok, do it") rather than a request that
    says what the work is: it never stands as the Goal when a real request is known."""
    text = collapse_whitespace(request).strip(" -*>\"'")
    if not text:
        return True
    if (
        estimate_tokens(text) > 12
        or len(text.split()) > 6
        or len(_CJK_CHAR_RE.sub("", text)) < len(text) - 6
    ):
        return False
    if re.search(r"[\w-]+\.[A-Za-z]{1,5}\b|/|_|[a-z][A-Z]|`", text):
        return False  # names a file or an identifier: it says what to work on
    return len(text.split()) <= 3 or bool(FOLLOW_UP_RE.match(text))


def user_prose(text: str) -> str:
    """The user's own words: prose() without the lines of a log, trace or data they pasted."""
    return "\n".join(ln for ln in prose(text).split("\n") if not LOG_LINE_RE.match(ln))


def is_status_remark(sentence: str) -> bool:
    """The agent narrating its work ("Let me look at x.", "Adding a test for it.") or asking."""
    words = sentence.split()
    return (
        (len(words) < 5 and not re.search(r"[\u3000-\u9fff]", sentence))
        or sentence.rstrip().endswith(("?", ":", "…", "..."))
        or bool(NARRATION_RE.match(sentence.strip(" *_-")))
    )


def decision(text: str, max_tokens: int = 50) -> str:
    """A sentence of the agent's that says what it decided or found (`the problem is …`,
    `… instead of …`), else its first sentence that is not a status remark; "" when every
    sentence is narration."""
    candidates = [s for s in sentences(prose(text)) if not is_status_remark(s)]
    chosen = next((s for s in candidates if DECISION_RE.search(s)), "")
    return fit_tokens(chosen, max_tokens) if chosen else ""


def is_document(text: str) -> bool:
    """A message that is a document (a report, notes, a file written out for the user): many
    lines, or several headings, list items or table rows."""
    lines = [ln for ln in clean_text(text).split("\n") if ln.strip()]
    structured = sum(1 for ln in lines if _DOC_LINE_RE.match(ln))
    return len(lines) >= 12 or (len(lines) >= 5 and structured >= 3)


def document_outcome(text: str, max_tokens: int) -> str:
    """How a message that is a document ended the run: its lead-in (or first heading) and its
    size, never its last line."""
    lines = [ln.strip() for ln in clean_text(text).split("\n") if ln.strip()]
    lead = next((ln for ln in lines if not _DOC_LINE_RE.match(ln)), "")
    heading = next((ln.lstrip("# ").strip() for ln in lines if ln.startswith("#")), "")
    head = lead or heading or (lines[0] if lines else "")
    tail = f" ({len(lines)} lines" + (f": {heading}" if heading and heading != head else "") + ")"
    room = max(4, max_tokens - estimate_tokens(tail))
    return fit_tokens(collapse_whitespace(head), room) + fit_tokens(tail, max_tokens)


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
