"""The prompt right after a pass, predicted before the pass runs (contract §5, Headroom).

A pass whose cut leaves the prompt just under the trigger threshold makes the next model call
compact again. So once the cut is chosen the planner predicts the prompt after the pass — the
new hot window plus the new summary.md, as the provider will count it (core.compaction.calibration)
— and, while it is above `T − compact_headroom_percent% × window`, moves the cut forward to the next
legal cut (core.compaction.planner). T is the smallest prompt size at which a token rule fires.

The summarizer has not run yet, so the new summary.md is predicted from sizes alone:

- the chunk's summary: `SUMMARY_BASE_TOKENS` (its section labels and the request) plus a
  quarter of the compacted events' estimate, at most `max_summary_tokens`, plus
  `ENTRY_FRAMING_TOKENS` for its entry line and indentation (the extractive summarizer's
  summaries of the project's sample transcripts stay under this);
- summary.md: the current one's estimate (its title and headings, `SUMMARY_FRAME_TOKENS`, when
  there is none yet) plus that chunk summary; when Recent Chunks is full, minus the summary of
  the chunk that leaves it, plus `ROLLING_LINE_TOKENS` for its Rolling Summary line;
- a split turn's synthetic event: `PREFIX_BASE_TOKENS` plus a quarter of the prefix's
  estimate, at most the prefix's own estimate and its share of the budget (all of it with no
  history), plus the per-event overhead.

Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.compaction.calibration import MIN_SAMPLES, PLAIN, Calibration
from core.tokens import EVENT_OVERHEAD_TOKENS, estimate_tokens

if TYPE_CHECKING:
    from core.compaction.state import SessionState
    from core.config import CompactionConfig

ENTRY_FRAMING_TOKENS = 8
"""A Recent Chunks entry's `- **<chunk_id>**` line and its two-space indentation."""
SUMMARY_FRAME_TOKENS = 20
"""summary.md's title and section headings, when there is no summary.md yet."""
SUMMARY_BASE_TOKENS = 160
"""A chunk summary's labels and request, whatever it summarises."""
PREFIX_BASE_TOKENS = 60
"""A split turn's prefix summary's labels and request."""
ROLLING_LINE_TOKENS = 40
"""The Rolling Summary line a chunk leaving Recent Chunks is folded into."""


def summary_size(source_tokens: int, budget: int) -> int:
    """The predicted estimate of a summary of `source_tokens` within `budget`."""
    return min(max(1, budget), SUMMARY_BASE_TOKENS + source_tokens // 4)


@dataclass(frozen=True)
class Headroom:
    """What the planner needs to predict the prompt after a pass."""

    calibration: Calibration = PLAIN
    threshold: int | None = None
    """T; None: the prediction is made (for the not-smaller check) but the cut never moves."""
    headroom_percent: float = 0.0
    window: int = 0
    summary_tokens: int | None = None
    """The current summary.md's estimate; None: there is none yet."""
    max_summary_tokens: int = 1024
    pushed_out_tokens: int | None = None
    """The estimate of the summary that leaves Recent Chunks at the next pass (None: none
    leaves, Recent Chunks is not full)."""

    @property
    def active(self) -> bool:
        """Headroom moves the cut once the calibration has two samples (contract §5)."""
        return self.threshold is not None and self.calibration.samples >= MIN_SAMPLES

    @property
    def limit(self) -> int | None:
        """`T − compact_headroom_percent% × window`: the predicted prompt after a pass must
        not be above it."""
        if self.threshold is None:
            return None
        return self.threshold - int(self.headroom_percent * self.window / 100)

    def chunk_summary_tokens(self, compacted_tokens: int) -> int:
        return summary_size(compacted_tokens, self.max_summary_tokens) + ENTRY_FRAMING_TOKENS

    def synthetic_tokens(self, prefix_tokens: int, has_history: bool) -> int:
        share = self.max_summary_tokens * 2 // 5 if has_history else self.max_summary_tokens
        size = min(max(1, share), prefix_tokens, PREFIX_BASE_TOKENS + prefix_tokens // 4)
        return EVENT_OVERHEAD_TOKENS + size

    def estimate_after(
        self, kept_tokens: int, compacted_tokens: int, prefix: tuple[int, bool] | None
    ) -> int:
        """The plain estimate of the prompt after the pass: `kept_tokens` (pinned root and
        retained events), the synthetic event when `prefix` is (prefix tokens, has history),
        and the new summary.md."""
        summary = self.summary_tokens if self.summary_tokens is not None else SUMMARY_FRAME_TOKENS
        total = kept_tokens + summary + self.chunk_summary_tokens(compacted_tokens)
        if self.pushed_out_tokens is not None:
            total += ROLLING_LINE_TOKENS - self.pushed_out_tokens - ENTRY_FRAMING_TOKENS
        if prefix is not None:
            total += self.synthetic_tokens(*prefix)
        return total

    def predict_after(
        self, kept_tokens: int, compacted_tokens: int, prefix: tuple[int, bool] | None
    ) -> int:
        """`estimate_after` as the provider will count it (overhead + ratio × estimate)."""
        return self.calibration.predict(self.estimate_after(kept_tokens, compacted_tokens, prefix))


def headroom_for(
    state: SessionState,
    config: CompactionConfig,
    model: str | None,
    summary_tokens: int | None,
    pushed_out_tokens: int | None = None,
) -> Headroom:
    """The session's headroom input: its calibration, T and the window of the active model,
    `compact_headroom_percent`, and summary.md's estimate (None: no summary.md yet)."""
    from core.compaction.trigger import token_threshold

    window = config.window_for(model or state.model)
    return Headroom(
        calibration=state.calibration(window),
        threshold=token_threshold(config, window),
        headroom_percent=config.compact_headroom_percent,
        window=window,
        summary_tokens=summary_tokens,
        max_summary_tokens=config.summarizer.max_summary_tokens,
        pushed_out_tokens=pushed_out_tokens,
    )


def pushed_out_summary(
    count: int, summary_of: Callable[[int], str], summary_max_chunks: int
) -> int | None:
    """The estimate of the summary the next pass pushes out of Recent Chunks, given the
    index's entry count and a reader of entry i's summary (only that one is read)."""
    index = count - summary_max_chunks
    if index < 0:
        return None
    return estimate_tokens(summary_of(index))


__all__ = [
    "ENTRY_FRAMING_TOKENS",
    "PREFIX_BASE_TOKENS",
    "ROLLING_LINE_TOKENS",
    "SUMMARY_BASE_TOKENS",
    "SUMMARY_FRAME_TOKENS",
    "Headroom",
    "headroom_for",
    "pushed_out_summary",
    "summary_size",
]
