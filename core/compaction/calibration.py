"""How this session's provider counts, learned from its recorded figures (contract §5,
Calibration).

A provider counts differently from the estimate (core.tokens) and sends a fixed part that is no
event (system prompt, tool schemas). Each recorded figure P is paired with E, the estimate of
what the prompt held then (summary.md plus the hot window up to the figure's anchor event);
from the last `MAX_PAIRS` pairs the session learns `P ≈ overhead + ratio × E`:

- `ratio` is the Theil–Sen slope: the median of the slopes between every two pairs whose
  estimates differ, clamped to [`MIN_RATIO`, `MAX_RATIO`];
- `overhead` is the median of `P − ratio × E`, clamped to [0, window/2].

Medians make one odd figure (a retried call, a figure recorded against the wrong events) move
nothing. With fewer than two pairs nothing is learned: `ratio` 1, `overhead` 0, so predictions
are plain estimates (headroom, core.compaction.headroom, waits for two samples too). Pure; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

MAX_PAIRS = 16
"""Recent (figure, estimate) pairs kept in state.json and fitted."""
MIN_RATIO = 0.5
MAX_RATIO = 4.0
MIN_SAMPLES = 2
"""Pairs needed before anything is learned (one pair cannot tell a fixed part from a ratio)."""

Pair = tuple[int, int]
"""(provider figure P, estimate E)."""


@dataclass(frozen=True)
class Calibration:
    """`predicted = overhead + ratio × estimate` (contract §5)."""

    overhead: int = 0
    ratio: float = 1.0
    samples: int = 0

    def predict(self, estimate: int) -> int:
        """The provider's count for a prompt whose estimate is `estimate`."""
        return self.overhead + self.scale(estimate)

    def scale(self, estimate: int) -> int:
        """`ratio × estimate`, rounded up: events appended after a recorded figure."""
        return math.ceil(self.ratio * estimate - 1e-9) if estimate > 0 else 0

    def to_json(self) -> dict[str, Any]:
        """`status --json`'s `calibration` object."""
        return {"overhead": self.overhead, "ratio": round(self.ratio, 4), "samples": self.samples}


PLAIN = Calibration()
"""No pair yet: predictions are plain estimates."""


def fit(pairs: Sequence[Pair], window: int) -> Calibration:
    """The robust fit over the last MAX_PAIRS `pairs`, clamped (see the module docstring)."""
    recent = [(int(p), int(e)) for p, e in pairs[-MAX_PAIRS:]]
    n = len(recent)
    if n < MIN_SAMPLES:
        return Calibration(samples=n)
    slopes = [
        (p2 - p1) / (e2 - e1)
        for i, (p1, e1) in enumerate(recent)
        for p2, e2 in recent[i + 1 :]
        if e2 != e1
    ]
    if slopes:
        ratio = median(slopes)
    else:
        # Every figure was taken over the same estimate: no slope to learn; the difference
        # is the fixed part when the provider counts more, else the ratio.
        p, e = median(p for p, _ in recent), median(e for _, e in recent)
        ratio = 1.0 if p >= e or e <= 0 else p / e
    ratio = min(MAX_RATIO, max(MIN_RATIO, ratio))
    overhead = median(p - ratio * e for p, e in recent)
    overhead = min(window // 2, max(0, math.floor(overhead)))
    return Calibration(overhead=int(overhead), ratio=float(ratio), samples=n)


def pairs_from_json(value: object) -> list[Pair]:
    """state.json's `calibration.pairs`, keeping only well-formed `[P, E]` items."""
    out: list[Pair] = []
    if not isinstance(value, list):
        return out
    for item in value:
        if (
            isinstance(item, list | tuple)
            and len(item) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in item)
        ):
            out.append((int(item[0]), int(item[1])))
    return out[-MAX_PAIRS:]


__all__ = [
    "MAX_PAIRS",
    "MAX_RATIO",
    "MIN_RATIO",
    "MIN_SAMPLES",
    "PLAIN",
    "Calibration",
    "Pair",
    "fit",
    "pairs_from_json",
]
