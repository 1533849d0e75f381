"""shouldCompress (contract §5, design "Compression Trigger"), explaining itself with numbers.

The prompt size the trigger reads is the latest recorded provider figure (or a pass's reset
estimate) plus the estimate of every event appended after it (`core.compaction.prompt_size`): so a
long run after a pass grows towards the next one, and a new user turn never blinds the trigger.
`read_trigger` is the one route from the session's state and hot window to the verdict: the pass,
`status`, `plan` and the inspector all take it."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from core.compaction.calibration import Calibration
from core.compaction.prompt_size import (
    PromptSize as PromptSize,  # re-exported: the trigger reads it
)
from core.compaction.prompt_size import PromptSource
from core.compaction.state import SessionState

if TYPE_CHECKING:  # the config is read through its attributes: the trigger loads no file
    from core.config import CompactionConfig
    from core.events import Event


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
    prompt_tokens_source: PromptSource
    count_rule: bool
    """Whether the count rule was applied (unknown size, or no provider figure ever)."""
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
    prompt_source: PromptSource | None = None,
    count_rule_too: bool = False,
) -> TriggerDecision:
    """Token rules when the prompt size is known, else the event-count rule.

    Known: `prompt ≥ window − min(reserve, window/2)` or `100·prompt/window ≥ compress_at_percent`.
    Unknown: `event_count > count_compress_after_events`. `count_rule_too`: a session that never
    recorded a provider figure applies the count rule beside the token rules (contract §5). The
    window is the model's when the models map knows it.
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
    source: PromptSource = "unknown" if prompt_tokens is None else (prompt_source or "recorded")
    count_rule = prompt_tokens is None or count_rule_too
    if prompt_tokens is not None:
        percent = 100 * prompt_tokens / window
        by_reserve = prompt_tokens >= threshold
        by_percent = percent >= limit
        fire = by_reserve or by_percent
        trigger = "tokens" if fire else None
        label = "prompt" if source == "recorded" else f"prompt ({source})"
        reason = (
            f"{label} {prompt_tokens} ≥ window {window}{window_note} − reserve {reserve}"
            f"{clamp_note} = {threshold}? {_yes(by_reserve)}; "
            f"{_percent_text(percent, limit)} of the window ≥ {limit:g}%? {_yes(by_percent)}"
        )
        if count_rule_too:
            by_count = event_count > count_limit
            reason += (
                f"; no provider figure ever recorded: {event_count} events > "
                f"count_compress_after_events {count_limit}? {_yes(by_count)}"
            )
            if by_count and not fire:
                fire, trigger = True, "count"
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
        prompt_tokens_source=source,
        count_rule=count_rule,
        compress_at_percent=limit,
        count_threshold=count_limit,
    )


NO_STATE = SessionState(session_id="none", created_at="")
"""Stands for a session not created yet: nothing recorded, no pass (cold start)."""


@dataclass(frozen=True)
class TriggerReading:
    """The trigger asked about the session now: the prompt size it read, the calibration
    that scaled the events appended after the figure, and its verdict."""

    size: PromptSize
    calibration: Calibration
    decision: TriggerDecision


def read_trigger(
    state: SessionState | None,
    event_ids: Sequence[object],
    tokens: Sequence[int],
    config: CompactionConfig,
    model: str | None = None,
    prompt_tokens: int | None = None,
) -> TriggerReading:
    """The one route to the trigger's verdict (contract §5), taken by the pass, `status`,
    `plan` and the inspector: the session's prompt size over the hot window
    (`event_ids`/`tokens`: state.json's figure plus `calibration.ratio ×` the estimate of the
    events after its anchor), then `should_compress` on it, with the count rule beside the
    token rules while no provider figure was ever recorded. `state` None: no session yet
    (cold start). `model` None: state.json's. `prompt_tokens` given by the caller
    (`--prompt-tokens N`, the inspector's what-if) stands for the whole prompt now."""
    state = state or NO_STATE
    model = model or state.model
    calibration = state.calibration(config.window_for(model))
    size = state.prompt_size(event_ids, tokens, calibration)
    given = prompt_tokens is not None
    decision = should_compress(
        prompt_tokens=prompt_tokens if given else size.tokens,
        event_count=len(event_ids),
        config=config,
        model=model,
        prompt_source="recorded" if given else size.source,
        count_rule_too=not given and not size.ever_recorded,
    )
    return TriggerReading(size, calibration, decision)


def trigger_for(
    state: SessionState,
    events: Sequence[Event],
    tokens: Sequence[int],
    config: CompactionConfig,
    model: str | None = None,
    prompt_tokens: int | None = None,
) -> TriggerDecision:
    """`read_trigger`'s verdict over a list of events (the pass's snapshot)."""
    ids = [e.get("id") for e in events]
    return read_trigger(state, ids, tokens, config, model, prompt_tokens).decision


def token_threshold(config: CompactionConfig, window: int) -> int:
    """T: the smallest prompt size at which a token rule fires (contract §5, Headroom):
    `min(window − reserve, ⌈compress_at_percent × window / 100⌉)`."""
    by_reserve = window - config.effective_reserve(window)
    by_percent = math.ceil(config.compress_at_percent * window / 100 - 1e-9)
    while by_percent > 0 and 100 * (by_percent - 1) / window >= config.compress_at_percent:
        by_percent -= 1
    while 100 * by_percent / window < config.compress_at_percent:
        by_percent += 1
    return max(0, min(by_reserve, by_percent))
