"""The trigger's prompt size (contract §5, changed 2026-11-30): the latest recorded figure plus
the estimate of every event appended after it; reset after a pass; unknown only at cold start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.compaction.prompt_size import prompt_size
from core.config import CompactionConfig
from core.manager import MemoryManager
from core.tokens import estimate_event_tokens, estimate_tokens
from tests.helpers.cli import cli_ok, json_out, write_config
from tests.helpers.invariants import assert_each_once, read_jsonl


def config(**changes: Any) -> CompactionConfig:
    base: dict[str, Any] = {
        "context_window": 4000,
        "reserve_tokens": 500,
        "compress_at_percent": 80,
        "count_compress_after_events": 10,
        "keep_recent_tokens": 300,
        "hot_window_events": 4,
    }
    base.update(changes)
    return CompactionConfig(**base)


def tool_pair(mm: MemoryManager, n: int, text: str = "ok") -> list[str]:
    call = mm.append(
        {"type": "tool_call", "name": "bash", "tool_call_id": f"c{n}", "arguments": {"n": n}}
    )
    res = mm.append(
        {"type": "tool_result", "name": "bash", "tool_call_id": f"c{n}", "content": text}
    )
    return [call["id"], res["id"]]


# --------------------------------------------------------------------------- pure


def window(
    base: int | None,
    base_source: str | None,
    after_event_id: str | None,
    ever_recorded: bool,
    tokens: list[int],
    anchored: bool = True,
) -> dict[str, Any]:
    """prompt_size's arguments over a hot window of events a, b, c, ... with `tokens`."""
    return {
        "base": base,
        "base_source": base_source,
        "anchored": anchored,
        "after_event_id": after_event_id,
        "ever_recorded": ever_recorded,
        "event_ids": [chr(ord("a") + i) for i in range(len(tokens))],
        "tokens": tokens,
    }


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(
            window(1000, "recorded", "b", True, [5, 6, 7, 8]),
            {"tokens": 1015, "appended": 15, "appended_events": 2, "source": "recorded"},
            id="adds_the_events_after_the_anchor",
        ),
        pytest.param(
            window(10, "estimated", None, False, [3, 4]),
            {"tokens": 17, "source": "estimated"},
            id="anchor_none_means_everything_came_after",
        ),
        pytest.param(
            window(None, None, None, False, [3], anchored=False),
            {"tokens": None, "source": "unknown"},
            id="unknown_only_without_a_figure",
        ),
        pytest.param(
            window(5, "recorded", "gone", True, [30, 40]),
            {"tokens": 70, "source": "estimated"},
            id="lost_anchor_is_at_least_the_window",
        ),
    ],
)
def test_prompt_size(arguments: dict[str, Any], expected: dict[str, Any]) -> None:
    size = prompt_size(**arguments)
    assert {key: getattr(size, key) for key in expected} == expected


# --------------------------------------------------------------------------- manager


def test_latest_recorded_size_wins_not_the_largest(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", config(context_window=128000))
    mm.begin_run("start")
    mm.record_prompt_tokens(40000)
    mm.record_prompt_tokens(20000)
    status = mm.status()
    assert status.last_prompt_tokens == 20000 and status.prompt_tokens == 20000


def test_a_new_user_turn_adds_its_estimate_and_never_triggers_by_count(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", config(context_window=100_000))
    mm.begin_run("first request")
    for n in range(12):
        tool_pair(mm, n)
    mm.record_prompt_tokens(2000)
    event = mm.begin_run("a second request from the user")
    status = mm.status()
    assert status.prompt_tokens_source == "recorded"
    assert status.prompt_tokens == 2000 + estimate_event_tokens(event)
    assert status.event_count > 10
    assert not status.should_compress, "sizes are known: the count rule does not apply"
    assert not mm.save().compacted


def test_a_long_run_after_a_pass_triggers_the_next_one(tmp_path: Path) -> None:
    """The trigger went blind after a pass: the reset figure never grew (issue 10)."""
    cfg = config(context_window=4000, count_compress_after_events=100_000, keep_recent_tokens=300)
    mm = MemoryManager(tmp_path / "m", cfg)
    ids = [mm.begin_run("build the thing")["id"]]
    for n in range(20):
        ids += tool_pair(mm, n, "x" * 400)
    mm.record_prompt_tokens(3500)
    first = mm.save()
    assert first.compacted and first.trigger is not None and first.trigger.trigger == "tokens"
    after = mm.status()
    hot = read_jsonl(tmp_path / "m" / "session" / "events.jsonl")
    summary_md = (tmp_path / "m" / "session" / "summary.md").read_text(encoding="utf-8")
    expected = sum(estimate_event_tokens(e) for e in hot) + estimate_tokens(summary_md)
    assert after.last_prompt_tokens == expected == after.prompt_tokens
    assert after.prompt_tokens_source == "estimated"
    assert not after.should_compress
    # the run goes on with no provider figure: the estimate grows until the next pass
    n = 100
    while not mm.status().should_compress:
        ids += tool_pair(mm, n, "y" * 400)
        n += 1
        assert n < 200, "the prompt size never grew"
    status = mm.status()
    assert status.prompt_tokens is not None and status.prompt_tokens >= 3200
    assert status.prompt_tokens_appended > 0
    second = mm.save()
    assert second.compacted and second.trigger is not None
    assert second.trigger.trigger == "tokens"
    assert_each_once(tmp_path / "m", ids)


def test_count_rule_at_cold_start_and_beside_tokens_without_provider_figures(
    tmp_path: Path,
) -> None:
    mm = MemoryManager(tmp_path / "m", config(count_compress_after_events=6, hot_window_events=3))
    mm.begin_run("task")
    assert mm.status().prompt_tokens_source == "unknown"
    for n in range(4):
        tool_pair(mm, n)
    first = mm.save()
    assert first.compacted and first.trigger is not None and first.trigger.trigger == "count"
    assert mm.status().prompt_tokens_source == "estimated"
    for n in range(10, 14):
        tool_pair(mm, n)
    status = mm.status()
    assert status.prompt_tokens is not None and not status.prompt_tokens >= 3200
    assert status.event_count > 6 and status.should_compress, "no figure was ever recorded"
    again = mm.save()
    assert again.compacted and again.trigger is not None and again.trigger.trigger == "count"


def test_a_recorded_figure_turns_the_count_rule_off(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", config(count_compress_after_events=6, hot_window_events=3))
    mm.begin_run("task")
    mm.record_prompt_tokens(100)
    for n in range(8):
        tool_pair(mm, n)
    status = mm.status()
    assert status.event_count > 6 and not status.should_compress
    assert status.prompt_tokens_source == "recorded"


# --------------------------------------------------------------------------- CLI


@pytest.fixture()
def cli_root(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write_config(
        tmp_path / "config" / "memory" / "extraction.yaml",
        context_window=100000,
        count_compress_after_events=1000,
    )
    return root


def test_status_json_reports_prompt_tokens_and_source(cli_root: Path) -> None:
    cli_ok(cli_root, "append", "--type", "user_input", "--text", "hello", "--prompt-tokens", "5000")
    status = json_out(cli_ok(cli_root, "status", "--json"))
    assert status["last_prompt_tokens"] == 5000
    assert status["prompt_tokens"] == 5000, "the batch's own events came before the figure"
    assert status["prompt_tokens_source"] == "recorded"
    cli_ok(cli_root, "append", "--type", "assistant_output", "--text", "x" * 400)
    status = json_out(cli_ok(cli_root, "status", "--json"))
    assert status["last_prompt_tokens"] == 5000
    assert status["prompt_tokens"] > 5000 + 100


def test_status_json_unknown_before_anything_is_recorded(cli_root: Path) -> None:
    cli_ok(cli_root, "append", "--type", "user_input", "--text", "hello")
    status = json_out(cli_ok(cli_root, "status", "--json"))
    assert status["prompt_tokens"] is None and status["prompt_tokens_source"] == "unknown"
