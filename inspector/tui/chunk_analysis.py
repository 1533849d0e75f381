"""What a chunk's summary kept of its events, so a person can judge a summary at a glance
(issue 10, "See it in the TUI"). Pure; the Chunks tab runs it in a thread worker with the
events it read from the chunk file.

    analyze_chunk(events, summary, cut_meta=None) -> ChunkAnalysis

- tokens: the estimate of the chunk's events (what left the hot window) against the estimate
  of its summary (what the model reads instead), and cut_meta's prompt before the pass
  (`tokens_before`) against the hot window it kept (`kept_tokens_estimate`);
- runs: each run the chunk covers (core.compaction.runs.split_runs): its request, or "(continued)"
when
  the run began in an earlier chunk;
- edited: every path the chunk's tool calls wrote, edited or created, whole;
- dropped: identifiers the user and the agent said or used (their words, tool-call arguments;
  core.compaction.runs.said_and_used_identifiers) that the summary does not name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.compaction.runs import said_and_used_identifiers, split_runs
from core.tokens import estimate_event_tokens, estimate_tokens

MAX_LISTED = 200


@dataclass(frozen=True)
class RunBrief:
    request: str
    continued: bool
    edits: tuple[str, ...]
    outcome: str
    error: str | None


@dataclass(frozen=True)
class ChunkAnalysis:
    events_tokens: int
    summary_tokens: int
    tokens_before: int | None
    kept_tokens: int | None
    runs: tuple[RunBrief, ...]
    edited: tuple[str, ...]
    identifiers: int
    """How many said/used identifiers the events hold."""
    dropped: tuple[str, ...]
    """Those the summary does not name (first-seen order, at most MAX_LISTED)."""
    dropped_count: int

    @property
    def ratio(self) -> float | None:
        """events tokens / summary tokens (how many times smaller the summary is)."""
        if self.summary_tokens <= 0:
            return None
        return self.events_tokens / self.summary_tokens

    @property
    def kept_share(self) -> float | None:
        if self.identifiers == 0:
            return None
        return 1 - self.dropped_count / self.identifiers


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def analyze_chunk(
    events: Sequence[dict[str, Any]], summary: str, cut_meta: dict[str, Any] | None = None
) -> ChunkAnalysis:
    """The figures and lists above, for one chunk (or pending evidence)."""
    meta = cut_meta or {}
    runs = split_runs(list(events))
    edited: list[str] = []
    briefs: list[RunBrief] = []
    for run in runs:
        edits = run.edits
        for path in edits:
            if path not in edited:
                edited.append(path)
        briefs.append(RunBrief(run.request, run.continued, tuple(edits), run.outcome, run.error))
    identifiers = said_and_used_identifiers(events)
    dropped = [ident for ident in identifiers if ident not in summary]
    return ChunkAnalysis(
        events_tokens=sum(estimate_event_tokens(e) for e in events),
        summary_tokens=estimate_tokens(summary),
        tokens_before=_int_or_none(meta.get("tokens_before")),
        kept_tokens=_int_or_none(meta.get("kept_tokens_estimate")),
        runs=tuple(briefs),
        edited=tuple(edited),
        identifiers=len(identifiers),
        dropped=tuple(dropped[:MAX_LISTED]),
        dropped_count=len(dropped),
    )
