"""The app's pure parts (issue 21 item 4): which actions are refused when
(inspector.tui.refusal) and the budget gauge's verdict (inspector.tui.budget), without an app."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from core.compaction.trigger import TriggerDecision
from inspector.tui.budget import budget_verdict, estimated_part
from inspector.tui.refusal import DEMO_ACTIONS, WRITE_ACTIONS, Gate, refusal, shown

ACTIVE = Gate(read_only=False, archived=False, demo=False)


@pytest.mark.parametrize("action", sorted(WRITE_ACTIONS))
def test_writes_are_refused_read_only_and_on_an_archive_with_the_way_out(action: str) -> None:
    assert shown(action, ACTIVE) and refusal(action, ACTIVE) is None
    read_only = Gate(read_only=True, archived=False, demo=False)
    assert not shown(action, read_only)
    assert refusal(action, read_only) == "the inspector was started with --read-only"
    archived = Gate(read_only=True, archived=True, demo=False)
    assert not shown(action, archived)
    assert "b goes back to the active session" in (refusal(action, archived) or "")


@pytest.mark.parametrize("action", sorted(DEMO_ACTIONS))
def test_demo_keys_need_a_running_demo(action: str) -> None:
    assert not shown(action, ACTIVE)
    assert "no demo running" in (refusal(action, ACTIVE) or "")
    demo = Gate(read_only=False, archived=False, demo=True)
    assert shown(action, demo) and refusal(action, demo) is None
    ended = Gate(read_only=False, archived=False, demo=True, demo_finished=True)
    assert shown(action, ended), "an ended demo keeps its keys, which say why they do nothing"
    assert "the demo has ended" in (refusal(action, ended) or "")


def test_back_to_active_only_away_from_it() -> None:
    assert not shown("back_to_active", ACTIVE)
    assert refusal("back_to_active", ACTIVE) == "already on the active session"
    away = Gate(read_only=False, archived=True, demo=False)
    assert shown("back_to_active", away) and refusal("back_to_active", away) is None
    assert shown("help", ACTIVE) and refusal("help", ACTIVE) is None


def _trigger(should: bool, prompt: int | None = 900) -> TriggerDecision:
    return TriggerDecision(
        should_compress=should,
        trigger="tokens" if should else None,
        reason="",
        prompt_tokens=prompt,
        event_count=10,
        context_window=1000,
        reserve=100,
        threshold_tokens=900,
        percent=None,
        prompt_tokens_source="recorded",
        count_rule=False,
        compress_at_percent=80.0,
        count_threshold=0,
    )


def _preview(useful: bool, after: int | None, path: str = "history") -> Any:
    plan = SimpleNamespace(useful=useful, predicted_after_tokens=after, path=path)
    return SimpleNamespace(plan=plan)


def test_the_verdict_says_what_a_pass_would_do() -> None:
    idle = budget_verdict(_trigger(False), None, running=False, archived=False)
    assert idle == ("idle: no pass needed", False)
    running = budget_verdict(_trigger(False), None, running=True, archived=False)
    assert running == ("a pass is running now", True)
    now = budget_verdict(_trigger(True), _preview(True, 400), running=False, archived=False)
    assert now == ("a pass would compact now — m runs it (history path)", True)
    grows = budget_verdict(_trigger(True), _preview(True, 950), running=False, archived=False)
    assert grows == ("a pass would not commit — it would not shrink the prompt", False)
    skip = budget_verdict(_trigger(True), _preview(False, None), running=False, archived=False)
    assert skip == ("a pass would skip: no useful cut", False)
    for running_now in (False, True):
        archived = budget_verdict(_trigger(True), None, running=running_now, archived=True)
        assert archived == ("none: an archived session is never compacted", False)


def test_the_estimated_part_is_the_figure_that_is_not_a_providers() -> None:
    estimated = SimpleNamespace(tokens=500, source="estimated", appended=0)
    appended = SimpleNamespace(tokens=500, source="recorded", appended=120)
    assert estimated_part(500, estimated) == 500  # type: ignore[arg-type]
    assert estimated_part(500, appended) == 120  # type: ignore[arg-type]
    assert estimated_part(400, appended) == 0  # type: ignore[arg-type]
    assert estimated_part(None, estimated) == 0  # type: ignore[arg-type]
