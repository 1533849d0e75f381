"""Replay (core/transcripts/replay.py): an imported transcript played into a memory root as its
agent ran."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from core.config import load_config
from core.maintenance.compaction_pass import PassResult
from core.manager import MemoryManager
from core.tokens import estimate_event_tokens
from core.transcripts.importers import load_transcript
from core.transcripts.replay import import_transcript, prompt_estimate, replay
from core.transcripts.transcript import ModelCall, Transcript
from tests.helpers.cli import write_config
from tests.helpers.invariants import assert_each_once, indexed_chunk_ids, read_jsonl
from tests.helpers.paths import TRANSCRIPTS

DATA = TRANSCRIPTS
SAMPLES = {
    # format: (file, a window small enough that the sample's own sizes make passes happen)
    "pi": ("pi_session.jsonl", 3700),
    "openai": ("openai_chat.json", 1400),
    "mini-swe-agent": ("mini_swe_agent.traj.json", 1800),
}


def manager(tmp_path: Path, window: int = 128000) -> MemoryManager:
    cfg_path = write_config(
        tmp_path / "extraction.yaml",
        context_window=window,
        reserve_tokens=window // 10,
        keep_recent_tokens=window // 8,
        hot_window_events=6,
        count_compress_after_events=10,
        summary_max_chunks=3,
    )
    root = tmp_path / "memory"
    return MemoryManager(root, load_config(cfg_path, root).config)


def spy_appends(mm: MemoryManager) -> list[str]:
    """Ids the store assigned to every appended event, in order."""
    ids: list[str] = []
    original = mm.append_many

    def append_many(events: Any, *, where: str = "event") -> list[dict[str, Any]]:
        stored = original(events, where=where)
        ids.extend(e["id"] for e in stored)
        return stored

    mm.append_many = append_many  # type: ignore[method-assign]
    return ids


def spy_records(mm: MemoryManager) -> list[int]:
    recorded: list[int] = []
    original = mm.record_prompt_tokens

    def record(n: int, model: str | None = None) -> None:
        recorded.append(n)
        original(n, model)

    mm.record_prompt_tokens = record  # type: ignore[method-assign]
    return recorded


def assert_no_tool_pair_split(session: Path) -> None:
    """Every tool_result sits in the same file (chunk or hot window) as its tool_call."""
    files = [session / "chunks" / f"{c}.jsonl" for c in indexed_chunk_ids(session)]
    files.append(session / "events.jsonl")
    for path in files:
        events = read_jsonl(path)
        calls = {e.get("tool_call_id") for e in events if e.get("type") == "tool_call"}
        for e in events:
            if e.get("type") == "tool_result":
                assert e["tool_call_id"] in calls, f"{path.name}: result split from its call"


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_replay_with_a_small_window_compacts_and_loses_nothing(tmp_path: Path, fmt: str) -> None:
    name, window = SAMPLES[fmt]
    transcript = load_transcript(DATA / name, fmt)
    mm = manager(tmp_path, window)
    ids = spy_appends(mm)
    passes: list[PassResult] = []

    def after_pass(result: PassResult) -> None:
        passes.append(result)
        assert_no_tool_pair_split(mm.paths.session)

    stats = replay(transcript, mm, after_pass=after_pass)

    assert stats.calls == len(transcript.calls)
    assert stats.events_appended == transcript.event_count == len(ids)
    # A token-triggered pass that would not make the prompt smaller does not commit (contract
    # §5, Headroom, 2026-12-01): in these tiny windows a late pass may be one.
    assert stats.compactions >= 1, stats
    for result in passes:
        assert result.compacted or (result.reason or "").startswith("not committed"), result
    assert sum(r.compacted for r in passes) == stats.compactions
    assert stats.passes == len(passes) == stats.token_triggered + stats.count_triggered
    assert stats.count_triggered == 0, "sizes are known in every sample: never by count"
    assert stats.prompt_sizes_recorded == sum(c.prompt_tokens is not None for c in transcript.calls)
    assert_each_once(mm.memory_dir, ids)
    assert_no_tool_pair_split(mm.paths.session)
    # events keep their transcript order across chunks and the hot window (whose first
    # event is the pinned root, the session's first request)
    hot = read_jsonl(mm.paths.events)
    assert hot[0]["type"] == "user_input"
    stored: list[dict[str, Any]] = hot[:1]
    for chunk in indexed_chunk_ids(mm.paths.session):
        stored += read_jsonl(mm.paths.session / "chunks" / f"{chunk}.jsonl")
    stored += hot[1:]
    lines = [e["meta"]["source"]["line"] for e in stored if "source" in e.get("meta", {})]
    assert lines == [e["meta"]["source"]["line"] for e in transcript.events()]


def test_before_call_sees_the_inputs_and_not_yet_the_outputs(tmp_path: Path) -> None:
    transcript = load_transcript(DATA / "pi_session.jsonl", "pi")
    mm = manager(tmp_path)
    seen: list[int] = []

    def before_call(i: int, call: ModelCall) -> None:
        seen.append(i)
        hot = read_jsonl(mm.paths.events)
        lines = [e["meta"]["source"]["line"] for e in hot]
        for event in call.inputs:
            assert event["meta"]["source"]["line"] in lines
        for event in call.outputs:
            assert event["meta"]["source"]["line"] not in lines

    replay(transcript, mm, before_call=before_call)
    assert seen == list(range(len(transcript.calls)))


def test_recorded_size_is_the_providers_before_compaction_and_ours_after(tmp_path: Path) -> None:
    transcript = load_transcript(DATA / "pi_session.jsonl", "pi")
    figures = [c.prompt_tokens for c in transcript.calls]
    # no passes: every recorded size is the provider's figure exactly
    mm = manager(tmp_path / "big")
    recorded = spy_records(mm)
    replay(transcript, mm)
    assert recorded == figures
    assert mm.status().last_prompt_tokens == figures[-1]

    # with passes: the provider's figure until the first compaction, then smaller (our
    # prompt is summary.md + hot window, plus the same overhead the provider counted)
    mm = manager(tmp_path / "small", 3700)
    recorded = spy_records(mm)
    first_compaction: list[int] = []
    calls_done: list[int] = []
    replay(
        transcript,
        mm,
        before_call=lambda i, _: calls_done.append(i),
        after_pass=lambda r: first_compaction.append(len(calls_done)) if r.compacted else None,
    )
    k = first_compaction[0]
    assert recorded[:k] == figures[:k]
    assert all(r < f for r, f in zip(recorded[k:], figures[k:], strict=True))


def test_prompt_estimate_is_summary_plus_hot_window(tmp_path: Path) -> None:
    transcript = load_transcript(DATA / "mini_swe_agent.traj.json", "mini-swe-agent")
    mm = manager(tmp_path, 1800)
    replay(transcript, mm)
    status = mm.status()
    summary = mm.paths.summary.read_text(encoding="utf-8")
    from core.tokens import estimate_tokens

    assert status.has_compressed_history
    assert prompt_estimate(mm) == status.hot_tokens + estimate_tokens(summary)


def test_plain_import_appends_in_order_without_passes(tmp_path: Path) -> None:
    transcript = load_transcript(DATA / "openai_chat.json", "openai")
    mm = manager(tmp_path, 1400)  # small enough that a replay would compact
    ids = spy_appends(mm)
    stats = import_transcript(transcript, mm)
    assert (stats.passes, stats.compactions, stats.prompt_sizes_recorded) == (0, 0, 1)
    hot = read_jsonl(mm.paths.events)
    assert [e["id"] for e in hot] == ids
    assert [e["content"] for e in hot] == [e["content"] for e in transcript.events()]
    assert not mm.has_compressed_history()
    # the last figure is recorded after the events before its call: what followed is added
    status = mm.status()
    assert status.last_prompt_tokens == transcript.last_prompt_tokens
    assert status.should_compress  # 1,240 + the final answer, in a 1,400 window


def test_trailing_events_get_a_last_pass(tmp_path: Path) -> None:
    calls = [ModelCall([{"type": "user_input", "role": "user", "content": "x" * 400}], [], 90)]
    trailing = [
        {"type": "assistant_output", "role": "assistant", "content": "y" * 400},
        {"type": "user_input", "role": "user", "content": "z" * 4000},
    ]
    mm = manager(tmp_path, 1000)
    stats = replay(Transcript("openai", "t", calls, trailing), mm)
    assert stats.events_appended == 3
    assert stats.passes == 1 and stats.token_triggered == 1


def synthetic(calls: int, *, ratio: float, fixed: int) -> Transcript:
    """A long run whose provider counts `ratio` tokens per estimated token plus `fixed`."""
    out: list[ModelCall] = []
    original = 0
    first = [{"type": "user_input", "role": "user", "content": "fix every module"}]
    for i in range(calls):
        result = {
            "type": "tool_result",
            "role": "tool",
            "name": "read",
            "tool_call_id": f"c{i - 1}",
            "content": f"line {i}\n" * 90,
        }
        inputs = first if i == 0 else [result]
        original += sum(estimate_event_tokens(e) for e in inputs)
        outputs = [
            {
                "type": "tool_call",
                "role": "assistant",
                "name": "read",
                "tool_call_id": f"c{i}",
                "arguments": {"path": f"src/module_{i}.py"},
            },
        ]
        out.append(ModelCall(inputs, outputs, fixed + round(ratio * original)))
        original += sum(estimate_event_tokens(e) for e in outputs)
    return Transcript("openai", "synthetic", out, [])


def test_a_tokenizer_mismatch_does_not_make_passes_ever_more_frequent(tmp_path: Path) -> None:
    """The provider's excess over our estimate grows with content; compacted content must not
    keep adding to the sizes recorded after it is gone (else every call ends up a pass). After
    a compaction the size recorded is the provider's fixed part plus its ratio times ours."""
    transcript = synthetic(240, ratio=1.3, fixed=1500)
    mm = manager(tmp_path, 12000)
    recorded = spy_records(mm)
    ours: list[int] = []
    pass_at: list[int] = []
    stats = replay(
        transcript,
        mm,
        before_call=lambda i, _: ours.append(prompt_estimate(mm)),
        after_pass=lambda r: pass_at.append(len(ours)),
    )
    assert stats.provider_ratio == pytest.approx(1.3, abs=0.02)
    assert stats.provider_fixed == pytest.approx(1500, abs=30)
    first = pass_at[0]
    for size, estimate in zip(recorded[first:], ours[first:], strict=True):
        assert size == pytest.approx(1500 + 1.3 * estimate, rel=0.02)
    # summary.md grows to its bound and then the passes come at a steady pace, several calls
    # apart (the 30 % excess of 240 calls' content would otherwise exceed the whole window)
    gaps = [b - a for a, b in itertools.pairwise(pass_at)]
    assert len(gaps) >= 6, pass_at
    assert min(gaps[-len(gaps) // 3 :]) >= 3, gaps


def test_provider_scale_fits_ratio_and_fixed_and_notices_the_agents_own_compaction() -> None:
    from core.transcripts.replay import ProviderScale

    scale = ProviderScale()
    for original in (100, 400, 900, 1500):
        scale.observe(original, 2000 + round(1.25 * original))
    assert scale.ratio == pytest.approx(1.25, abs=0.01)
    assert scale.fixed == pytest.approx(2000, abs=2)
    assert scale.ours(1000) == pytest.approx(3250, abs=3)
    assert not scale.dropped
    scale.observe(1800, 2600)  # the original agent summarised its own context
    assert scale.dropped
    assert scale.ratio == pytest.approx(1.25, abs=0.01)  # a drop is no ratio sample


def test_after_the_original_agent_compacts_itself_the_replay_uses_the_fit(tmp_path: Path) -> None:
    """pi compacts its own context: its later figures count a summary, not our events."""
    transcript = synthetic(12, ratio=1.0, fixed=500)
    calls = list(transcript.calls)
    calls[8] = ModelCall(calls[8].inputs, calls[8].outputs, 900)  # far below the run before
    mm = manager(tmp_path)  # a window no pass will ever need
    recorded = spy_records(mm)
    replay(Transcript("openai", "t", calls, []), mm)
    assert recorded[:8] == [c.prompt_tokens for c in calls[:8]]  # exact before the drop
    assert recorded[8] > 900  # our prompt still holds every event
    assert recorded[8] == pytest.approx(calls[7].prompt_tokens, rel=0.2)


def test_provider_ratio_is_taken_on_scrubbed_events(tmp_path: Path) -> None:
    """A screenshot's base64 never reaches the hot window, so it must not count in the
    estimate the provider's figures are scaled against (else the trigger fires far too late)."""
    from core.scrub import strip_screenshot_data

    calls: list[ModelCall] = []
    figure = 3000
    for n in range(12):
        shot = {
            "type": "tool_result",
            "role": "tool",
            "name": "screenshot",
            "tool_call_id": f"s{n}",
            "content": {"data": "QUJD" * 5000, "width": 1080, "height": 2400, "format": "png"},
        }
        call = {
            "type": "tool_call",
            "role": "assistant",
            "name": "screenshot",
            "tool_call_id": f"s{n + 1}",
            "arguments": {"n": n},
        }
        inputs = [shot] if n else [{"type": "user_input", "role": "user", "content": "open wifi"}]
        figure += sum(estimate_event_tokens(strip_screenshot_data(e)) for e in inputs)
        calls.append(ModelCall(inputs=inputs, outputs=[call], prompt_tokens=figure))
        figure += estimate_event_tokens(call)
    transcript = Transcript(format="openai", source="t", calls=calls[:-1], trailing=[])
    stats = replay(transcript, manager(tmp_path))
    assert stats.provider_ratio is not None
    assert stats.provider_ratio == pytest.approx(1.0, abs=0.05)
