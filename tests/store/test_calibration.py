"""Calibration, headroom and turn start (contract §5, changed 2026-12-01; issue 19 causes 1, 4).

Small fixtures: a provider that counts twice the estimate plus a fixed part, a pass that would
not shrink the prompt, several passes inside one long turn.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from core.compaction.calibration import MAX_RATIO, MIN_RATIO, PLAIN, Calibration, fit
from core.compaction.state import SessionState
from core.config import CompactionConfig
from core.manager import MemoryManager
from core.transcripts.replay import prompt_estimate
from inspector.cli.output import render_plan
from tests.helpers.cli import run_cli
from tests.helpers.memory import read_file_pair

# --------------------------------------------------------------------------- the fit


def test_no_pair_or_one_pair_predicts_plain_estimates() -> None:
    assert fit([], 1000) == Calibration(0, 1.0, 0)
    one = fit([(5000, 1000)], 100_000)
    assert (one.overhead, one.ratio, one.samples) == (0, 1.0, 1)
    assert PLAIN.predict(1234) == 1234


def test_fit_learns_a_fixed_part_and_a_ratio() -> None:
    pairs = [(26_000 + 2 * e, e) for e in (1000, 1800, 2500, 4000, 6100)]
    cal = fit(pairs, 200_000)
    assert cal.samples == 5
    assert cal.ratio == pytest.approx(2.0)
    assert cal.overhead == 26_000
    assert cal.predict(10_000) == 46_000


def test_fit_is_robust_to_an_odd_figure() -> None:
    pairs = [(500 + 3 * e, e) for e in range(100, 1600, 100)]
    pairs[7] = (99_000, pairs[7][1])  # a retried call, a figure against the wrong events
    cal = fit(pairs, 1_000_000)
    assert cal.ratio == pytest.approx(3.0)
    assert cal.overhead == 500


def test_fit_uses_recent_pairs_only() -> None:
    old = [(10 * e, e) for e in range(100, 2100, 100)]
    new = [(1000 + e, e) for e in range(100, 1700, 100)]
    cal = fit(old + new, 1_000_000)
    assert cal.samples == 16
    assert cal.ratio == pytest.approx(1.0)
    assert cal.overhead == 1000


def test_fit_clamps_ratio_and_overhead() -> None:
    steep = fit([(10 * e, e) for e in (100, 200, 300)], 1_000_000)
    assert steep.ratio == MAX_RATIO
    flat = fit([(e // 10, e) for e in (1000, 2000, 3000)], 1_000_000)
    assert flat.ratio == MIN_RATIO
    assert flat.overhead == 0  # P − 0.5·E is negative: clamped to 0
    big = fit([(90_000 + e, e) for e in (100, 200, 300)], 100_000)
    assert big.ratio == pytest.approx(1.0)
    assert big.overhead == 50_000  # clamped to window/2


# --------------------------------------------------------------------------- state.json


def test_state_round_trips_calibration_and_unknown_keys() -> None:
    raw = {
        "session_id": "s-20261201T000000Z-abcdef",
        "created_at": "2026-12-01T00:00:00Z",
        "last_prompt_tokens": 30_000,
        "prompt_tokens_source": "recorded",
        "prompt_tokens_after_event_id": "e9",
        "counters": {"prompt_tokens_recorded": 3},
        "future_key": {"kept": True},
        "calibration": {
            "overhead": 26_000,
            "ratio": 2.0,
            "samples": 3,
            "pairs": [[28_000, 1000], [30_000, 2000], [32_000, 3000]],
            "estimate": 3000,
            "future_sub_key": [1, 2],
        },
    }
    state = SessionState.from_json(raw, "state.json")
    assert state.calibration(100_000) == Calibration(26_000, 2.0, 3)
    assert state.prompt_estimate == 3000
    out = state.to_json()
    assert out["future_key"] == {"kept": True}
    assert out["calibration"]["future_sub_key"] == [1, 2]
    assert out["calibration"]["pairs"] == raw["calibration"]["pairs"]  # type: ignore[index]
    assert SessionState.from_json(json.loads(json.dumps(out)), "x") == state


def test_older_state_without_calibration_loads() -> None:
    state = SessionState.from_json(
        {"session_id": "s-20261201T000000Z-abcdef", "created_at": "x", "last_prompt_tokens": 9},
        "state.json",
    )
    assert state.calibration(1000) == PLAIN
    assert state.prompt_estimate is None
    assert "calibration" not in state.to_json()


def test_recorded_figures_pair_with_the_estimate_of_what_the_prompt_held(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", CompactionConfig())
    mm.begin_run("fix the parser in src/parse.py")
    e1 = prompt_estimate(mm)
    mm.record_prompt_tokens(26_000 + 2 * e1)
    mm.append({"type": "assistant_output", "role": "assistant", "content": "x" * 4000})
    e2 = prompt_estimate(mm)
    mm.record_prompt_tokens(26_000 + 2 * e2)
    state = mm.store.read_state()
    assert state.calibration_pairs == [(26_000 + 2 * e1, e1), (26_000 + 2 * e2, e2)]
    status = mm.status()
    assert status.calibration == Calibration(26_000, 2.0, 2)
    # Appended events count ratio × their estimate on top of the latest figure.
    event = mm.append({"type": "assistant_output", "role": "assistant", "content": "y" * 400})
    from core.tokens import estimate_event_tokens

    assert mm.status().prompt_tokens == 26_000 + 2 * e2 + 2 * estimate_event_tokens(event)


def test_status_json_reports_calibration(tmp_path: Path) -> None:
    root = tmp_path / "m"
    mm = MemoryManager(root, CompactionConfig())
    mm.begin_run("hello")
    mm.record_prompt_tokens(1000)
    mm.append({"type": "assistant_output", "role": "assistant", "content": "z" * 800})
    mm.record_prompt_tokens(1600)
    mm.close()
    done = run_cli(["--memory-dir", root, "status", "--json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    cal = json.loads(done.stdout)["calibration"]
    assert set(cal) == {"overhead", "ratio", "samples"}
    assert cal["samples"] == 2
    assert cal["ratio"] == pytest.approx(3.0, rel=0.05)


# --------------------------------------------------------------------------- headroom

FIXED = 2600
RATIO = 2


def _tool_pair(n: int) -> list[dict[str, Any]]:
    return read_file_pair(
        n, f"src/module_{n}.py", f"module {n}: " + "def handler(): return compute(x) " * 16
    )


def _provider_session(root: Path, config: CompactionConfig, calls: int) -> list[int]:
    """A session whose provider counts RATIO × the estimate plus FIXED: at each model call the
    figure is recorded, the model's tool call and result are appended, and a pass runs if the
    trigger says so. Returns the calls after which a pass compacted."""
    mm = MemoryManager(root, config)
    passes: list[int] = []
    for call in range(calls):
        if call % 6 == 0:
            mm.begin_run(f"request {call}: look at the handlers again")
        mm.record_prompt_tokens(FIXED + RATIO * prompt_estimate(mm))
        mm.append_many(_tool_pair(call))
        result = mm.save()
        if result.compacted:
            passes.append(call)
    mm.close()
    return passes


CONFIG = CompactionConfig(
    context_window=10_000,
    reserve_tokens=1000,
    compress_at_percent=80,
    keep_recent_tokens=2500,
    count_compress_after_events=10_000,
    summary_max_chunks=3,
    summarizer=CompactionConfig().summarizer.__class__(max_summary_tokens=300),
)


def test_provider_counting_twice_plus_a_fixed_part_never_compacts_back_to_back(
    tmp_path: Path,
) -> None:
    # Before calibration and headroom this fixture compacted at 42 consecutive calls of 60
    # (every call from the 17th on): the reset left out the fixed part and the ratio.
    passes = _provider_session(tmp_path / "m", CONFIG, 60)
    assert len(passes) >= 4, "the session compacts at all"
    back_to_back = sum(1 for a, b in itertools.pairwise(passes) if b == a + 1)
    assert back_to_back == 0, passes


def _calibrated_root(tmp_path: Path) -> Path:
    """A root at the threshold whose calibration has samples (provider: 2× + FIXED)."""
    root = tmp_path / "m"
    mm = MemoryManager(root, CONFIG)
    mm.begin_run("request 0: look at the handlers")
    n = 0
    while True:
        figure = FIXED + RATIO * prompt_estimate(mm)
        mm.record_prompt_tokens(figure)
        if figure >= 8000:
            break
        mm.append_many(_tool_pair(n))
        n += 1
    mm.close()
    return root


def test_plan_reports_headroom_moves_and_says_why(tmp_path: Path) -> None:
    root = _calibrated_root(tmp_path)
    config_path = tmp_path / "extraction.yaml"
    config_path.write_text(
        yaml.safe_dump(
            {
                "session_compaction": {
                    "context_window": 10_000,
                    "reserve_tokens": 1000,
                    "keep_recent_tokens": 2500,
                    "count_compress_after_events": 10_000,
                    "compact_headroom_percent": 10,
                    "summarizer": {"max_summary_tokens": 300},
                }
            }
        )
    )
    done = run_cli(["--memory-dir", root, "--config", config_path, "plan", "--json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["should_compress"] and plan["trigger"] == "tokens"
    assert plan["headroom_moves"] >= 1
    assert plan["token_path"]["cut_index"] < plan["cut_index"]
    assert plan["predicted_after_tokens"] <= plan["headroom_limit"] == 8000 - 1000
    assert any("headroom" in note and "moves" in note for note in plan["notes"])
    human = run_cli(["--memory-dir", root, "--config", config_path, "plan"], cwd=tmp_path)
    assert human.returncode == 0, human.stderr
    assert "headroom" in human.stdout and "forward" in human.stdout


def test_headroom_waits_for_two_samples(tmp_path: Path) -> None:
    mm = MemoryManager(tmp_path / "m", CONFIG.replace(keep_recent_tokens=500))
    mm.begin_run("request 0: look at the handlers")
    for n in range(12):
        mm.append_many(_tool_pair(n))
    mm.record_prompt_tokens(9000)  # one figure: predictions stay plain estimates
    report = mm.plan()
    assert report.trigger.should_compress
    assert report.plan.headroom_moves == 0
    assert report.plan.headroom_limit is None
    assert any("needs 2" in note for note in report.plan.notes)


def test_a_pass_that_would_not_shrink_the_prompt_does_not_commit(tmp_path: Path) -> None:
    config = CONFIG.replace(context_window=1000, reserve_tokens=0, keep_recent_tokens=1500)
    mm = MemoryManager(tmp_path / "m", config)
    mm.begin_run("request 0: look at the handlers")
    for n in range(12):
        mm.append_many(_tool_pair(n))
    # The provider says the prompt is 800 tokens (it counts far less than the estimate): the
    # pass would keep more than that, so it would not make the prompt smaller.
    mm.record_prompt_tokens(800)
    before = [e["id"] for e in mm.store.read_events().events]
    report = mm.plan().to_json()
    assert report["should_compress"] and report["trigger"] == "tokens"
    assert report["would_add_tokens"] == report["predicted_after_tokens"] - 800 > 0
    assert any("this pass would add" in note for note in report["notes"])
    console = Console(record=True, width=120)
    render_plan(console, mm.plan())
    assert "this pass would add" in console.export_text()
    result = mm.save()
    assert result.trigger is not None and result.trigger.trigger == "tokens"
    assert not result.compacted
    assert result.reason is not None and result.reason.startswith("not committed")
    assert "would not be smaller" in result.reason and "grow the prompt by" in result.reason
    assert [e["id"] for e in mm.store.read_events().events] == before
    assert not (tmp_path / "m" / "session" / "chunks" / "index.yaml").exists()
    assert not list((tmp_path / "m" / "session" / "chunks").glob("pending/*"))
    forced = mm.save(force=True)
    assert forced.compacted, "--force still compacts: the user asked for it"


# --------------------------------------------------------------------------- turn start

TURN_CONFIG = CompactionConfig(
    context_window=100_000,
    keep_recent_tokens=300,
    count_compress_after_events=10_000,
    summary_max_chunks=8,
)


def _long_turn(tmp_path: Path) -> tuple[MemoryManager, str]:
    """The root turn, then a long second turn (its request says REQ-B-7731); the CLI reads
    TURN_CONFIG from M/../config/memory/extraction.yaml."""
    beside = tmp_path / "config" / "memory" / "extraction.yaml"
    beside.parent.mkdir(parents=True)
    section = {"keep_recent_tokens": 300, "count_compress_after_events": 10_000}
    beside.write_text(yaml.safe_dump({"session_compaction": section}), encoding="utf-8")
    mm = MemoryManager(tmp_path / "m", TURN_CONFIG)
    mm.begin_run("first: say hello")
    mm.append({"type": "assistant_output", "role": "assistant", "content": "hello"})
    request = mm.begin_run("REQ-B-7731: refactor every handler in src/handlers/")
    return mm, request["id"]


def _synthetic(mm: MemoryManager) -> dict[str, Any]:
    events = mm.store.read_events().events
    found = [e for e in events if (e.get("meta") or {}).get("synthetic") == "split_turn_prefix"]
    assert len(found) == 1, "one synthetic event in the hot window"
    return found[0]


def _entries(mm: MemoryManager) -> list[dict[str, Any]]:
    data = yaml.safe_load((mm.paths.index).read_text(encoding="utf-8"))
    return list(data["chunks"])


def test_turn_start_after_an_earlier_pass_in_the_same_turn(tmp_path: Path) -> None:
    mm, request_id = _long_turn(tmp_path)
    for n in range(8):
        mm.append_many(_tool_pair(n))
    first = mm.save(force=True)
    assert first.compacted and first.is_split_turn, first.reason
    assert _entries(mm)[0]["cut_meta"]["turn_start_event_id"] == request_id
    assert _synthetic(mm)["meta"]["turn_start_event_id"] == request_id

    for n in range(8, 16):
        mm.append_many(_tool_pair(n))
    report = mm.plan()
    root_id = mm.store.read_events().events[0]["id"]
    assert report.plan.is_split_turn
    assert report.plan.turn_start_event_id == request_id != root_id
    assert report.plan.history_indices() == []
    done = run_cli(["--memory-dir", mm.memory_dir, "plan", "--json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["turn_start_event_id"] == request_id

    second = mm.save(force=True)
    assert second.compacted and second.is_split_turn, second.reason
    entry = _entries(mm)[1]
    assert entry["cut_meta"]["turn_start_event_id"] == request_id
    assert _synthetic(mm)["meta"]["turn_start_event_id"] == request_id
    assert set(_synthetic(mm)["meta"]) == {"synthetic", "chunk_id", "turn_start_event_id"}
    assert entry["summary"].startswith("Turn Context (split turn):"), "no history part"

    # Which chunk holds the request (issue 22 item 2): the first pass's, however many follow.
    first_chunk = _entries(mm)[0]["chunk_id"]
    assert [e.get("turn_start_chunk_id") for e in _entries(mm)] == [first_chunk] * 2
    for n in range(16, 24):
        mm.append_many(_tool_pair(n))
    report = mm.plan()
    assert report.plan.turn_continued and report.plan.turn_start_event_id == request_id
    assert report.plan.turn_start_chunk_id == first_chunk
    assert report.plan.turn_request is not None and "REQ-B-7731" in report.plan.turn_request
    assert any(f"user_input is in chunk {first_chunk}" in note for note in report.plan.notes)
    assert mm.save(force=True).compacted
    assert _entries(mm)[2]["turn_start_chunk_id"] == first_chunk


def test_passes_inside_one_turn_name_its_request_a_bounded_number_of_times(
    tmp_path: Path,
) -> None:
    mm, _ = _long_turn(tmp_path)
    counts = []
    for p in range(6):
        for n in range(8 * p, 8 * p + 8):
            mm.append_many(_tool_pair(n))
        result = mm.save(force=True)
        assert result.compacted and result.is_split_turn, result.reason
        prompt = mm.build_prompt("system", "go on")
        counts.append(sum(str(m.get("content")).count("REQ-B-7731") for m in prompt))
    assert counts[0] >= 1, "the request is named"
    assert max(counts) <= 2, counts
    summary = (mm.paths.summary).read_text(encoding="utf-8")
    assert summary.count("REQ-B-7731") == 1, "the chunk that compacted the request names it"


def test_the_gauge_figure_after_a_pass_is_close_to_the_next_provider_figure(
    tmp_path: Path,
) -> None:
    """Issue 19 cause 1 / issue 22 item 6: the reset carries the fixed part, so the budget
    gauge's figure (the trigger's prompt size over the rows on screen) does not jump when the
    next figure arrives (it went 33.6 % → 68.9 % before)."""
    from inspector.tui.hot_window_model import HotWindowModel, plan_now, read_light_status

    root = tmp_path / "m"
    mm = MemoryManager(root, CONFIG)
    jumps: list[float] = []
    shown: int | None = None
    for call in range(40):
        if call % 6 == 0:
            mm.begin_run(f"request {call}: look at the handlers again")
        figure = FIXED + RATIO * prompt_estimate(mm)
        if shown is not None:
            jumps.append(abs(figure - shown) / figure)
            shown = None
        mm.record_prompt_tokens(figure)
        mm.append_many(_tool_pair(call))
        if mm.save().compacted:
            model = HotWindowModel(mm.paths.events)
            snapshot = model.poll().snapshot
            status = read_light_status(mm, include_archives=False)
            now = plan_now(snapshot, status, CONFIG, CONFIG)
            assert now.size.tokens == mm.status().prompt_tokens, "the gauge reads the trigger's"
            shown = now.size.tokens
    mm.close()
    assert len(jumps) >= 3
    assert max(jumps) < 0.1, jumps


def test_the_inspector_cut_preview_moves_its_cut_as_the_pass_would(tmp_path: Path) -> None:
    """The TUI's preview (in the app's thread or its planning child) gets the same headroom as
    `plan` and a pass, so the screen shows the cut the pass will make (issue 22 item 1)."""
    from core.compaction.headroom import headroom_for
    from inspector.tui.hot_window_model import HotWindowModel, plan_now, read_light_status
    from inspector.tui.plan_process import PlanProcess

    root = _calibrated_root(tmp_path)
    mm = MemoryManager(root, CONFIG)
    expected = mm.plan().plan
    assert expected.headroom_moves >= 1
    snapshot = HotWindowModel(mm.paths.events).poll().snapshot
    status = read_light_status(mm, include_archives=False)
    assert status.prompt_state is not None
    headroom = headroom_for(status.prompt_state, CONFIG, None, mm.store.summary_estimate())
    local = plan_now(snapshot, status, CONFIG, CONFIG, headroom=headroom).preview.plan
    assert local.cut_index == expected.cut_index
    assert local.headroom_moves == expected.headroom_moves
    child = PlanProcess()
    try:
        remote = plan_now(
            snapshot, status, CONFIG, CONFIG, planner=child.plan, headroom=headroom
        ).preview.plan
    finally:
        child.close()
    assert remote == local


@pytest.mark.parametrize("value", [51, -1, "ten", True])
def test_a_bad_headroom_percent_is_an_error_naming_key_and_file(tmp_path: Path, value: Any) -> None:
    MemoryManager(tmp_path / "m", CompactionConfig()).begin_run("hello")
    path = tmp_path / "extraction.yaml"
    path.write_text(yaml.safe_dump({"session_compaction": {"compact_headroom_percent": value}}))
    done = run_cli(["--memory-dir", tmp_path / "m", "--config", path, "status"], cwd=tmp_path)
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "compact_headroom_percent" in last and str(path) in last
    assert "Traceback" not in done.stderr


def test_headroom_percent_defaults_to_ten_and_takes_the_bounds() -> None:
    from core.config import parse_config

    assert CompactionConfig().compact_headroom_percent == 10
    for value in (0, 50, 12.5):
        section = {"session_compaction": {"compact_headroom_percent": value}}
        assert parse_config(section, "x.yaml")[0].compact_headroom_percent == value


def test_status_json_of_an_older_state_without_calibration(tmp_path: Path) -> None:
    root = tmp_path / "m"
    mm = MemoryManager(root, CompactionConfig())
    mm.begin_run("hello")
    mm.close()
    state_path = root / "session" / "state.json"
    state = json.loads(state_path.read_text())
    state.pop("calibration", None)
    state["last_prompt_tokens"] = 5000  # an older file: a figure with no anchor, no pairs
    state.pop("prompt_tokens_after_event_id", None)
    state_path.write_text(json.dumps(state))
    done = run_cli(["--memory-dir", root, "status", "--json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["calibration"] == {"overhead": 0, "ratio": 1.0, "samples": 0}
    assert out["prompt_tokens"] == 5000
