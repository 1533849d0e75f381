"""shouldCompress (contract §5): token rules when the prompt size is known, else the count rule."""

from __future__ import annotations

import json

import pytest

from core.compaction.trigger import should_compress
from core.config import DEFAULT_CONFIG, CompactionConfig

# Percent rule switched off (100%) to test the reserve rule alone, and the other way round.
RESERVE_ONLY = CompactionConfig(context_window=1000, reserve_tokens=100, compress_at_percent=100)
PERCENT_ONLY = CompactionConfig(context_window=1000, reserve_tokens=0, compress_at_percent=75)


@pytest.mark.parametrize(("prompt", "fires"), [(899, False), (900, True), (901, True)])
def test_reserve_rule_fires_at_window_minus_reserve(prompt: int, fires: bool) -> None:
    d = should_compress(prompt_tokens=prompt, event_count=0, config=RESERVE_ONLY)
    assert d.should_compress is fires
    assert d.trigger == ("tokens" if fires else None)
    assert d.threshold_tokens == 900
    assert d.reserve == 100


@pytest.mark.parametrize(("prompt", "fires"), [(749, False), (750, True), (751, True)])
def test_percent_rule_fires_at_the_percentage(prompt: int, fires: bool) -> None:
    d = should_compress(prompt_tokens=prompt, event_count=0, config=PERCENT_ONLY)
    assert d.should_compress is fires
    assert d.trigger == ("tokens" if fires else None)
    assert d.percent == pytest.approx(prompt / 10)


def test_with_the_defaults_either_rule_fires() -> None:
    # 80% of 128000 = 102400 comes before 128000 − 16384 = 111616
    assert not should_compress(
        prompt_tokens=102399, event_count=0, config=DEFAULT_CONFIG
    ).should_compress
    assert should_compress(
        prompt_tokens=102400, event_count=0, config=DEFAULT_CONFIG
    ).should_compress
    # with a 95% percent rule the reserve rule is the one that fires first
    config = DEFAULT_CONFIG.replace(compress_at_percent=95)
    assert not should_compress(prompt_tokens=111615, event_count=0, config=config).should_compress
    assert should_compress(prompt_tokens=111616, event_count=0, config=config).should_compress


def test_fractional_percent_threshold() -> None:
    config = CompactionConfig(context_window=1000, reserve_tokens=0, compress_at_percent=33.3)
    assert not should_compress(prompt_tokens=332, event_count=0, config=config).should_compress
    assert should_compress(prompt_tokens=333, event_count=0, config=config).should_compress


def test_reserve_is_clamped_to_half_the_window() -> None:
    config = CompactionConfig(context_window=1000, reserve_tokens=900, compress_at_percent=100)
    below = should_compress(prompt_tokens=499, event_count=0, config=config)
    at = should_compress(prompt_tokens=500, event_count=0, config=config)
    assert (below.reserve, below.threshold_tokens) == (500, 500)
    assert not below.should_compress
    assert at.should_compress
    # unclamped the threshold would have been 100: a tiny prompt would have fired
    assert not should_compress(prompt_tokens=100, event_count=0, config=config).should_compress


def test_models_map_gives_the_window() -> None:
    config = CompactionConfig(
        context_window=100000, reserve_tokens=0, compress_at_percent=80, models={"small": 1000}
    )
    small = should_compress(prompt_tokens=800, event_count=0, config=config, model="small")
    assert small.context_window == 1000
    assert small.should_compress
    unknown = should_compress(prompt_tokens=800, event_count=0, config=config, model="other")
    assert unknown.context_window == 100000
    assert not unknown.should_compress
    assert not should_compress(prompt_tokens=800, event_count=0, config=config).should_compress


@pytest.mark.parametrize(("count", "fires"), [(119, False), (120, False), (121, True)])
def test_unknown_prompt_uses_the_event_count_strictly_greater(count: int, fires: bool) -> None:
    d = should_compress(prompt_tokens=None, event_count=count, config=DEFAULT_CONFIG)
    assert d.should_compress is fires
    assert d.trigger == ("count" if fires else None)
    assert d.percent is None
    assert d.count_threshold == 120


def test_known_prompt_ignores_the_event_count() -> None:
    d = should_compress(prompt_tokens=10, event_count=10_000, config=DEFAULT_CONFIG)
    assert not d.should_compress
    assert d.trigger is None


def test_zero_prompt_is_known_not_unknown() -> None:
    d = should_compress(prompt_tokens=0, event_count=500, config=DEFAULT_CONFIG)
    assert not d.should_compress
    assert d.percent == 0.0


def test_reason_for_the_token_path_shows_the_numbers() -> None:
    d = should_compress(prompt_tokens=104000, event_count=3, config=DEFAULT_CONFIG)
    for number in ("104000", "128000", "16384", "111616", "81.2", "80"):
        assert number in d.reason
    assert d.should_compress


def test_reason_mentions_the_clamp() -> None:
    config = CompactionConfig(context_window=1000, reserve_tokens=900)
    d = should_compress(prompt_tokens=10, event_count=0, config=config)
    assert "900" in d.reason
    assert "500" in d.reason
    assert "clamped" in d.reason


def test_reason_percent_never_rounds_across_the_threshold() -> None:
    # 102399 / 128000 = 79.9992…%: one decimal would show 80.0% and look like it should fire
    d = should_compress(prompt_tokens=102399, event_count=0, config=DEFAULT_CONFIG)
    assert not d.should_compress
    assert "80.0%" not in d.reason


def test_reason_for_the_count_path_shows_the_numbers() -> None:
    d = should_compress(prompt_tokens=None, event_count=121, config=DEFAULT_CONFIG)
    assert "121" in d.reason
    assert "120" in d.reason
    assert "unknown" in d.reason


def test_to_json_is_plain_json() -> None:
    d = should_compress(prompt_tokens=104000, event_count=3, config=DEFAULT_CONFIG)
    data = json.loads(json.dumps(d.to_json()))
    assert data["should_compress"] is True
    assert data["trigger"] == "tokens"
    assert data["context_window"] == 128000
    assert data["threshold_tokens"] == 111616
    assert data["reason"] == d.reason
    unknown = should_compress(prompt_tokens=None, event_count=1, config=DEFAULT_CONFIG).to_json()
    assert unknown["prompt_tokens"] is None
    assert unknown["trigger"] is None


def test_read_trigger_is_the_one_route_cold_start_recorded_and_given() -> None:
    """No state: the size is unknown and the count rule decides; a recorded figure anchored at
    an event adds the estimate of what came after it; a figure given by the caller stands for
    the whole prompt (recorded, no count rule); `trigger_for` is the same verdict over events."""
    from core.compaction.state import SessionState
    from core.compaction.trigger import read_trigger, trigger_for

    cfg = CompactionConfig(context_window=1000, count_compress_after_events=2)
    ids, tokens = ["a", "b", "c"], [10, 20, 30]
    cold = read_trigger(None, ids, tokens, cfg)
    assert cold.size.source == "unknown" and cold.decision.trigger == "count"
    state = SessionState.fresh()
    state.last_prompt_tokens, state.prompt_tokens_source = 500, "recorded"
    state.prompt_tokens_after_event_id, state.prompt_tokens_anchored = "a", True
    state.counters["prompt_tokens_recorded"] = 1
    now = read_trigger(state, ids, tokens, cfg)
    assert (now.size.tokens, now.size.appended) == (550, 50)
    assert now.decision.prompt_tokens == 550 and not now.decision.count_rule
    given = read_trigger(state, ids, tokens, cfg, prompt_tokens=900)
    assert given.decision.prompt_tokens == 900 and given.decision.should_compress
    assert given.decision.prompt_tokens_source == "recorded"
    events = [{"id": i} for i in ids]
    assert trigger_for(state, events, tokens, cfg) == now.decision
    assert trigger_for(state, events, tokens, cfg, prompt_tokens=900) == given.decision
