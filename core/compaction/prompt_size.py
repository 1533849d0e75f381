"""The prompt size the trigger reads (contract §5, Prompt size): the latest recorded provider
figure (or a pass's reset estimate) plus the estimate of every event appended after it.

Pure, importing nothing from core: `core.compaction.state` (whose `SessionState.prompt_size` feeds
it state.json's figure) and `core.compaction.trigger` (which decides on it) both build on it."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

PromptSource = Literal["recorded", "estimated", "unknown"]


@dataclass(frozen=True)
class PromptSize:
    """The prompt size the trigger uses, and where each part of it came from."""

    tokens: int | None
    """base + appended; None when unknown (cold start: nothing recorded, no pass yet)."""
    base: int | None
    """state.json's last_prompt_tokens: the latest recorded figure or a pass's reset estimate."""
    appended: int
    """The events appended after `base` was set: `ratio ×` their estimate (contract §5)."""
    appended_events: int
    source: PromptSource
    """`recorded` when the base is a provider figure, `estimated` when it is a pass's reset
    (or the anchor was lost), `unknown` at cold start."""
    ever_recorded: bool
    """Whether this session ever recorded a provider figure; if not, the count rule applies
    alongside the token rule."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def prompt_size(
    *,
    base: int | None,
    base_source: str | None,
    anchored: bool,
    after_event_id: object,
    ever_recorded: bool,
    event_ids: Sequence[object],
    tokens: Sequence[int],
    ratio: float = 1.0,
) -> PromptSize:
    """The trigger's prompt size from state.json's figure and the hot window (contract §5).

    `after_event_id` is the last event when the figure was set (None: events.jsonl was empty);
    events after it add `ratio ×` their estimates (the calibration's). An unanchored figure
    (an older state.json) adds nothing. When the anchor is gone from the window (a crash
    between a pass's events write and its state write), the figure is at least the window's
    own estimate.
    """
    if base is None:
        return PromptSize(None, None, 0, 0, "unknown", ever_recorded)
    source: PromptSource = "estimated" if base_source == "estimated" else "recorded"
    if not anchored:
        return PromptSize(base, base, 0, 0, source, ever_recorded)
    n = len(event_ids)
    start: int | None = 0 if after_event_id is None else None
    if start is None:
        for i in range(n - 1, -1, -1):
            if event_ids[i] == after_event_id:
                start = i + 1
                break
    if start is None:
        window = sum(tokens)
        if window > base:
            return PromptSize(window, base, window - base, n, "estimated", ever_recorded)
        return PromptSize(base, base, 0, 0, source, ever_recorded)
    raw = sum(tokens[start:])
    appended = math.ceil(ratio * raw - 1e-9) if raw > 0 else 0
    return PromptSize(base + appended, base, appended, n - start, source, ever_recorded)


__all__ = ["PromptSize", "PromptSource", "prompt_size"]
