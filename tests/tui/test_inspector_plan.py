"""inspector.tui.hot_window_model.plan_now: what the plan job shows (the cut preview, the what-if
verdict and the configured one), computed without the app, on a real memory root."""

from __future__ import annotations

from pathlib import Path

from core.manager import MemoryManager
from inspector.tui.hot_window_model import (
    HotWindowModel,
    LightStatus,
    plan_now,
    read_light_status,
    what_if_config,
)
from tests.helpers.tui_fixtures import CONFIG


def _inputs(root: Path) -> tuple[HotWindowModel, LightStatus]:
    manager = MemoryManager(root, CONFIG, read_only=True)
    model = HotWindowModel(manager.paths.events)
    model.poll()
    return model, read_light_status(manager, include_archives=False)


def test_plan_now_keeps_the_configured_verdict_apart_from_the_what_if(basic: Path) -> None:
    model, status = _inputs(basic)
    snapshot = model.snapshot()
    plain = plan_now(snapshot, status, CONFIG, CONFIG)
    assert plain.real_trigger.should_compress and plain.trigger.should_compress
    assert plain.size.tokens is not None and plain.size.tokens >= 3300
    # A typed prompt size of 0 silences the what-if verdict only; the gauge's stays.
    quiet = plan_now(snapshot, status, CONFIG, CONFIG, 0)
    assert not quiet.trigger.should_compress and quiet.real_trigger.should_compress


def test_what_if_values_move_the_cut(basic: Path) -> None:
    model, status = _inputs(basic)
    snapshot = model.snapshot()
    plain = plan_now(snapshot, status, CONFIG, CONFIG)
    tighter = what_if_config(CONFIG, 20, None)
    assert (
        tighter.keep_recent_tokens == 20 and tighter.hot_window_events == CONFIG.hot_window_events
    )
    assert what_if_config(CONFIG, None, None) is CONFIG
    moved = plan_now(snapshot, status, CONFIG, tighter)
    assert moved.preview.plan.keep_recent_tokens == 20
    assert plain.preview.cut_row is not None and moved.preview.cut_row is not None
    assert moved.preview.cut_row > plain.preview.cut_row  # less kept: the cut moves down
