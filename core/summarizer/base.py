"""What every summarizer shares: the protocol, its error, the summary kinds and sections,
and the split-turn framing (contract §4, §5)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from core.compaction.runs import ORIGINAL_REQUEST_LABEL, SPLIT_TURN_MARKER, SUMMARY_LABELS
from core.errors import SessionMemoryError
from core.events import Event
from core.text import (
    collapse_whitespace,
    compact_json,
    shorten,
)
from core.tokens import estimate_tokens

SummaryKind = Literal["history", "turn_prefix"]

SPLIT_TURN_SEPARATOR = "\n\n---\n\n"

TOOL_RESULT_READ_CHARS = 2000
"""Long tool results are cut to this many characters before anything reads them."""
TEXT_READ_CHARS = 8000
"""Other event text is read up to this many characters (a pasted log stays cheap)."""


class SummarizerError(SessionMemoryError):
    """A summarizer backend failed; the maintenance pass falls back to the extractive one."""


class Summarizer(Protocol):
    """Writes one chunk summary (or a split turn's prefix summary) from events."""

    name: str

    def summarize(
        self,
        events: Sequence[Event],
        *,
        kind: SummaryKind = "history",
        previous_summary: str | None = None,
        focus: str | None = None,
        max_tokens: int = 1024,
    ) -> str: ...


class SummarizerConfigLike(Protocol):
    """What make_summarizer reads (core.config.SummarizerConfig has these attributes)."""

    @property
    def backend(self) -> str: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def api_key_env(self) -> str | None: ...
    @property
    def timeout_seconds(self) -> float: ...
    @property
    def max_summary_tokens(self) -> int: ...


def args_short(args: Any, max_chars: int = 80) -> str:
    if isinstance(args, str):
        stripped = args.strip()
        if stripped.startswith("{"):
            try:
                args = json.loads(stripped)
            except ValueError:
                return shorten(collapse_whitespace(stripped), max_chars)
        else:
            return shorten(collapse_whitespace(stripped), max_chars)
    if isinstance(args, dict):
        parts = [f"{k}={v if isinstance(v, str) else compact_json(v)}" for k, v in args.items()]
        return shorten(collapse_whitespace(", ".join(parts)), max_chars)
    if args is None:
        return ""
    return shorten(collapse_whitespace(compact_json(args)), max_chars)


def split_turn_overhead_tokens() -> int:
    """The estimate the split-turn framing (separator and marker line) adds to a chunk summary:
    history budget + prefix budget + this ≤ max_summary_tokens keeps the whole within it."""
    return estimate_tokens(f"{SPLIT_TURN_SEPARATOR}{SPLIT_TURN_MARKER}\n")


def split_turn_summary(history: str, prefix: str) -> str:
    """The chunk summary of a split turn (contract §5).

    `history + "\n\n---\n\nTurn Context (split turn):\n" + prefix`; when the history is empty
    (or only whitespace) the result is `"Turn Context (split turn):\n" + prefix`, with no
    leading separator, so that the summary never starts with blank lines.
    """
    if not history.strip():
        return f"{SPLIT_TURN_MARKER}\n{prefix}"
    return f"{history}{SPLIT_TURN_SEPARATOR}{SPLIT_TURN_MARKER}\n{prefix}"


CONTINUED_REQUEST_NOTE = "- (the same request as the chunk before: this chunk continues that turn)"
"""What a continued split turn's chunk summary says instead of repeating the request."""


def continued_turn_prefix(prefix: str) -> str:
    """A continued split turn's prefix as its chunk summary carries it (contract §5, Turn
    start): the bullets under `Original request:` become one line that points back, because
    the chunk that compacted the turn's user_input names the request already and the
    synthetic event in the hot window carries it; so passes inside one long turn do not each
    add the request to summary.md again. A prefix without that section is kept as it is."""
    lines = prefix.split("\n")
    out: list[str] = []
    skipping = False
    for line in lines:
        stripped = line.strip()
        if stripped == ORIGINAL_REQUEST_LABEL:
            out += [line, CONTINUED_REQUEST_NOTE]
            skipping = True
            continue
        if skipping and (stripped in SUMMARY_LABELS or (stripped and line[:1] not in " -\t")):
            skipping = False
        if not skipping:
            out.append(line)
    return "\n".join(out)
