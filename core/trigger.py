"""shouldCompress (contract §5, design "Compression Trigger"), explaining itself with numbers."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from core.config import CompactionConfig


@dataclass(frozen=True)
class TriggerDecision:
    """Whether to compact now, which rule fired, and every number the rules looked at."""

    should_compress: bool
    trigger: Literal["tokens", "count"] | None
    reason: str
    prompt_tokens: int | None
    event_count: int
    context_window: int
    reserve: int
    """reserve_tokens clamped to half the window."""
    threshold_tokens: int
    """context_window − reserve."""
    percent: float | None
    """100·prompt/window, None when the prompt size is unknown."""
    compress_at_percent: float
    count_threshold: int

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able dict (for `plan --json`, `status --json` and the TUI)."""
        return dataclasses.asdict(self)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _percent_text(percent: float, limit: float) -> str:
    """One decimal, unless rounding would make the shown comparison disagree with the real one."""
    text = f"{percent:.1f}"
    if (float(text) >= limit) != (percent >= limit):
        text = repr(percent)
    return text + "%"


def should_compress(
    *,
    prompt_tokens: int | None,
    event_count: int,
    config: CompactionConfig,
    model: str | None = None,
) -> TriggerDecision:
    """Token rules when the prompt size is known, else the event-count rule.

    Known: `prompt ≥ window − min(reserve, window/2)` or `100·prompt/window ≥ compress_at_percent`.
    Unknown: `event_count > count_compress_after_events`. The window is the model's when the
    models map knows it.
    """
    window = config.window_for(model)
    reserve = config.effective_reserve(window)
    threshold = window - reserve
    limit = config.compress_at_percent
    count_limit = config.count_compress_after_events
    clamp_note = (
        f" (reserve_tokens {config.reserve_tokens} clamped to half the window)"
        if reserve != config.reserve_tokens
        else ""
    )
    window_note = f" (model {model})" if model is not None and model in config.models else ""

    trigger: Literal["tokens", "count"] | None
    percent: float | None
    if prompt_tokens is not None:
        percent = 100 * prompt_tokens / window
        by_reserve = prompt_tokens >= threshold
        by_percent = percent >= limit
        fire = by_reserve or by_percent
        trigger = "tokens" if fire else None
        reason = (
            f"prompt {prompt_tokens} ≥ window {window}{window_note} − reserve {reserve}"
            f"{clamp_note} = {threshold}? {_yes(by_reserve)}; "
            f"{_percent_text(percent, limit)} of the window ≥ {limit:g}%? {_yes(by_percent)}"
        )
    else:
        percent = None
        fire = event_count > count_limit
        trigger = "count" if fire else None
        reason = (
            f"prompt size unknown: {event_count} events > "
            f"count_compress_after_events {count_limit}? {_yes(fire)}"
        )
    verdict = f"compress ({trigger} trigger)" if fire else "no compaction needed"
    return TriggerDecision(
        should_compress=fire,
        trigger=trigger,
        reason=f"{reason} → {verdict}",
        prompt_tokens=prompt_tokens,
        event_count=event_count,
        context_window=window,
        reserve=reserve,
        threshold_tokens=threshold,
        percent=percent,
        compress_at_percent=limit,
        count_threshold=count_limit,
    )
