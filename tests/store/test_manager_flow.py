"""The design's flow end to end through MemoryManager, with real files (contract §5–§11)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.config import CompactionConfig
from core.events import Event
from core.manager import MemoryManager
from core.summarizer import ExtractiveSummarizer, SummaryKind
from tests.helpers.invariants import assert_each_once, indexed_chunk_ids, read_jsonl


def small_config(**changes: Any) -> CompactionConfig:
    base: dict[str, Any] = {
        "context_window": 4000,
        "reserve_tokens": 500,
        "compress_at_percent": 80,
        "count_compress_after_events": 12,
        "keep_recent_tokens": 100_000,
        "hot_window_events": 4,
        "summary_max_chunks": 2,
        "max_rolling_summary_lines": 6,
    }
    base.update(changes)
    return CompactionConfig(**base)


def play_turn(mm: MemoryManager, n: int, *, tools: int = 1) -> list[str]:
    """One user turn with `tools` tool call/result pairs and an answer; returns appended ids."""
    ids = [mm.begin_run(f"task {n}: check the wifi settings on device {n}")["id"]]
    for t in range(tools):
        call = mm.append(
            {
                "type": "tool_call",
                "role": "assistant",
                "name": "tap",
                "tool_call_id": f"c{n}-{t}",
                "arguments": {"x": t, "y": n},
            }
        )
        res = mm.append(
            {
                "type": "tool_result",
                "role": "tool",
                "name": "tap",
                "tool_call_id": f"c{n}-{t}",
                "content": f"tapped at {t},{n}",
            }
        )
        ids += [call["id"], res["id"]]
    ids.append(mm.append({"type": "assistant_output", "content": f"done with task {n}"})["id"])
    return ids


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return tmp_path / "memory"


def test_count_trigger_compacts_and_keeps_hot_window(root: Path) -> None:
    mm = MemoryManager(root, small_config())
    ids: list[str] = []
    for n in range(4):
        ids += play_turn(mm, n)
    assert len(ids) == 16
    result = mm.save()
    assert result.compacted, result.reason
    assert result.trigger is not None and result.trigger.trigger == "count"
    assert result.plan is not None and result.plan.path == "count"
    hot = read_jsonl(root / "session" / "events.jsonl")
    assert hot[0]["id"] == ids[0], "the root user_input is pinned first"
    assert len(hot) < len(ids)
    assert indexed_chunk_ids(root / "session") == [result.chunk_id]
    assert_each_once(root, ids)
    summary = (root / "session" / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# Session History (compressed chunks)\n")
    assert "## Rolling Summary" in summary and "## Recent Chunks" in summary
    assert f"- **{result.chunk_id}**" in summary
    assert mm.has_compressed_history()


def test_below_count_threshold_nothing_happens(root: Path) -> None:
    mm = MemoryManager(root, small_config())
    ids = play_turn(mm, 0)
    result = mm.save()
    assert not result.compacted
    assert result.reason is not None and result.reason.startswith("not needed")
    assert [e["id"] for e in read_jsonl(root / "session" / "events.jsonl")] == ids


def test_token_trigger_then_prompt_reset_prevents_recompaction(root: Path) -> None:
    mm = MemoryManager(root, small_config(count_compress_after_events=1000, keep_recent_tokens=60))
    ids: list[str] = []
    for n in range(3):
        ids += play_turn(mm, n)
    mm.record_prompt_tokens(1200)
    mm.record_prompt_tokens(3900)
    assert mm.status().last_prompt_tokens == 3900, "the latest recorded prompt counts"
    result = mm.save()
    assert result.compacted, result.reason
    assert result.trigger is not None and result.trigger.trigger == "tokens"
    assert result.plan is not None and result.plan.path == "token"
    status = mm.status()
    hot = read_jsonl(root / "session" / "events.jsonl")
    from core.tokens import estimate_event_tokens, estimate_tokens

    summary_md = (root / "session" / "summary.md").read_text(encoding="utf-8")
    estimate = sum(estimate_event_tokens(e) for e in hot) + estimate_tokens(summary_md)
    # Contract §5 (2026-12-01): the reset is the *predicted* size (overhead + ratio × estimate)
    # of the new hot window plus summary.md; two figures give the calibration two samples.
    assert status.calibration.samples == 2
    assert status.last_prompt_tokens == status.calibration.predict(estimate), (
        "reset to the new hot window plus summary.md, as the provider counts"
    )
    assert status.prompt_tokens_source == "estimated"
    again = mm.save()
    assert not again.compacted, "a stale pre-compaction prompt size must not compact again"
    assert_each_once(root, ids)
    entry = yaml.safe_load((root / "session/chunks/index.yaml").read_text())["chunks"][0]
    assert entry["cut_meta"]["first_kept_event_id"] == result.plan.first_kept_event_id
    assert entry["cut_meta"]["tokens_before"] > entry["cut_meta"]["kept_tokens_estimate"]


def test_new_run_keeps_prompt_size_and_adds_its_estimate(root: Path) -> None:
    mm = MemoryManager(root, small_config())
    play_turn(mm, 0)
    mm.record_prompt_tokens(3000)
    event = mm.begin_run("next task")
    status = mm.status()
    assert status.last_prompt_tokens == 3000
    from core.tokens import estimate_event_tokens

    assert status.prompt_tokens == 3000 + estimate_event_tokens(event)
    assert status.prompt_tokens_source == "recorded"


def test_split_turn_writes_prefix_summary_to_chunk_and_hot_window(root: Path) -> None:
    mm = MemoryManager(root, small_config(count_compress_after_events=10, hot_window_events=5))
    ids = play_turn(mm, 0)
    ids += play_turn(mm, 1, tools=8)  # one long turn: the count cut lands inside it
    result = mm.save()
    assert result.compacted and result.is_split_turn, result.reason
    hot = read_jsonl(root / "session" / "events.jsonl")
    assert hot[0]["id"] == ids[0]
    synthetic = hot[1]
    assert synthetic["type"] == "system_event" and synthetic["role"] == "system"
    assert synthetic["meta"] == {
        "synthetic": "split_turn_prefix",
        "chunk_id": result.chunk_id,
        "turn_start_event_id": ids[4],  # contract §2, added 2026-12-01
    }
    entry = yaml.safe_load((root / "session/chunks/index.yaml").read_text())["chunks"][0]
    assert "\n\n---\n\nTurn Context (split turn):\n" in entry["summary"]
    assert entry["cut_meta"]["is_split_turn"] is True
    turn_start = entry["cut_meta"]["turn_start_event_id"]
    assert turn_start == ids[4], "the long turn's user_input opened the split turn"
    assert synthetic["content"] in entry["summary"]
    assert_each_once(root, ids)


def test_root_stays_pinned_across_many_compactions(root: Path) -> None:
    mm = MemoryManager(root, small_config(count_compress_after_events=8, hot_window_events=3))
    ids: list[str] = []
    for n in range(12):
        ids += play_turn(mm, n)
        mm.save()
    chunks = indexed_chunk_ids(root / "session")
    assert len(chunks) >= 4
    assert read_jsonl(root / "session" / "events.jsonl")[0]["id"] == ids[0]
    for chunk_id in chunks:
        chunk_ids = [e["id"] for e in read_jsonl(root / "session/chunks" / f"{chunk_id}.jsonl")]
        assert ids[0] not in chunk_ids
    assert_each_once(root, ids)


def test_recent_chunks_overflow_into_archive_and_rolling_summary(root: Path) -> None:
    cfg = small_config(count_compress_after_events=6, hot_window_events=2, summary_max_chunks=2)
    mm = MemoryManager(root, cfg)
    for n in range(10):
        play_turn(mm, n)
        mm.save()
    chunks = indexed_chunk_ids(root / "session")
    assert len(chunks) > 3
    summary = (root / "session" / "summary.md").read_text(encoding="utf-8")
    recent = summary.split("## Recent Chunks", 1)[1]
    assert recent.count("- **") == 2
    assert f"- **{chunks[-1]}**" in recent and f"- **{chunks[-2]}**" in recent
    archive = (root / "session" / "summary_archive.md").read_text(encoding="utf-8")
    for chunk_id in chunks[:-2]:
        assert f"- **{chunk_id}**" in archive
    rolling = summary.split("## Rolling Summary", 1)[1].split("## Recent Chunks", 1)[0]
    lines = [ln for ln in rolling.strip("\n").split("\n") if ln]
    assert 0 < len(lines) <= cfg.max_rolling_summary_lines
    assert lines[0].startswith("[… ") and "earlier lines truncated]" in lines[0]


def test_rotation_archives_the_session_and_starts_empty(root: Path) -> None:
    mm = MemoryManager(root, small_config())
    ids: list[str] = []
    for n in range(4):
        ids += play_turn(mm, n)
    assert mm.save().compacted
    old_id = mm.status().session_id
    result = mm.rotate()
    assert result.closed_session_id == old_id
    assert result.archive_path == root / "session_archive" / str(old_id)
    assert (result.archive_path / "events.jsonl").exists()
    assert (root / "session" / "events.jsonl").read_bytes() == b""
    status = mm.status()
    assert status.session_id != old_id and status.event_count == 0
    assert not mm.has_compressed_history(), "archives never count as compressed history"
    assert mm.recall("wifi").results == [], "archives are never recalled"
    assert [a.session_id for a in status.archives] == [old_id]
    assert_each_once(root, ids)
    messages = mm.build_prompt("You are a device agent.", "next")
    assert messages == [
        {"role": "system", "content": "You are a device agent."},
        {"role": "user", "content": "next"},
    ]


def test_rotation_name_collision_gets_suffix(root: Path) -> None:
    mm = MemoryManager(root, small_config())
    play_turn(mm, 0)
    sid = mm.status().session_id
    (root / "session_archive" / str(sid)).mkdir(parents=True)
    result = mm.rotate()
    assert result.archive_path == root / "session_archive" / f"{sid}-2"


def test_recall_finds_compacted_events_with_active_source(root: Path) -> None:
    mm = MemoryManager(root, small_config())
    play_turn(mm, 0)
    mm.append(
        {"type": "tool_result", "name": "read_file", "content": "ERROR: disk quota on /sdcard"}
    )
    for n in range(1, 5):
        play_turn(mm, n)
    assert mm.save().compacted
    result = mm.recall("disk quota", limit=3)
    assert result.results and result.results[0].source == "active"
    assert any("disk quota" in str(e.get("content")) for e in result.results[0].events)
    assert result.pending_chunks_recalled == 0


def test_recall_index_survives_appends_and_grows_by_the_new_chunk_only(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recall after appends reads no chunk file again; after a compaction it reads only the
    new chunk; a hit's events are read from its chunk file when it is returned; and the
    answers are those of a manager that builds the index from scratch."""
    import core.recall.service

    reads: list[str] = []
    real_read = core.recall.service.read_chunk_events

    def counting_read(paths: Any, chunk_id: str) -> Any:
        reads.append(chunk_id)
        return real_read(paths, chunk_id)

    monkeypatch.setattr(core.recall.service, "read_chunk_events", counting_read)
    mm = MemoryManager(root, small_config())
    queries = ["wifi settings device", "tapped", "task 3", "done with task"]
    no_hit = "zebra-quartz"  # matches nothing: what it reads is the index build alone

    def same_as_fresh() -> None:
        fresh = MemoryManager(root, small_config(), read_only=True)
        for q in queries:
            assert mm.recall(q, limit=10) == fresh.recall(q, limit=10), q

    for n in range(4):
        play_turn(mm, n)
    first = mm.save()
    assert first.compacted
    assert mm.recall(no_hit).results == []
    assert reads == [first.chunk_id]
    for n in range(4, 6):
        play_turn(mm, n)  # appends only: events.jsonl changes, the chunks do not
    mm.recall(no_hit)
    assert reads == [first.chunk_id]
    reads.clear()
    second = mm.save()
    assert second.compacted and second.chunk_id != first.chunk_id
    mm.recall(no_hit)
    assert reads == [second.chunk_id]
    reads.clear()
    (hit,) = mm.recall("tapped", limit=1).results
    assert hit.events and all("tapped" in str(e.get("content")) for e in hit.events)
    assert reads == [hit.chunk_id], "only the returned chunk is read, for its events"
    same_as_fresh()


def test_build_prompt_follows_appends_compactions_and_rotation(root: Path) -> None:
    """The prompt is read incrementally; whatever happened to events.jsonl in between, it is
    the prompt a manager reading the files from scratch builds."""
    mm = MemoryManager(root, small_config())

    def check() -> list[dict[str, Any]]:
        prompt = mm.build_prompt("sys", "next")
        fresh = MemoryManager(root, small_config(), read_only=True)
        assert prompt == fresh.build_prompt("sys", "next")
        return prompt

    assert [m["role"] for m in check()] == ["system", "user"]
    play_turn(mm, 0)
    assert "done with task 0" in str(check())
    for n in range(1, 4):
        play_turn(mm, n)
    check()
    assert mm.save().compacted  # events.jsonl replaced by the hot window
    prompt = check()
    assert "done with task 3" in str(prompt) and "tapped at 0,1" not in str(prompt[1:])
    other = MemoryManager(root, small_config())  # another writer appends behind its back
    other.append({"type": "assistant_output", "content": "from the other writer"})
    assert "from the other writer" in str(check())
    mm.rotate()
    assert "done with task 3" not in str(check())
    play_turn(mm, 9)
    assert "done with task 9" in str(check())


def test_build_prompt_places_summary_and_native_messages(root: Path) -> None:
    mm = MemoryManager(root, small_config())
    for n in range(4):
        play_turn(mm, n)
    mm.save()
    messages = mm.build_prompt("SYSTEM", "TASK")
    assert messages[0]["role"] == "system"
    assert messages[0]["content"].startswith("SYSTEM")
    assert "# Session History (compressed chunks)" in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": "TASK"}
    assert messages[1]["role"] == "user", "the pinned root opens the hot window"
    assert not any("Conversation history" in str(m.get("content")) for m in messages)
    hot = read_jsonl(root / "session" / "events.jsonl")
    assert len(read_jsonl(root / "session" / "events.jsonl")) == len(hot), "nothing written"


class GatedSummarizer:
    """A summarizer that blocks until the test opens the gate."""

    name = "gated"

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.calls = 0

    def summarize(
        self, events: Sequence[Event], *, kind: SummaryKind = "history", **kw: Any
    ) -> str:
        self.calls += 1
        self.entered.set()
        assert self.gate.wait(30), "test never opened the gate"
        max_tokens = kw.get("max_tokens", 1024)
        return ExtractiveSummarizer().summarize(events, kind=kind, max_tokens=max_tokens)


def test_request_maintenance_never_blocks_appends_and_coalesces(root: Path) -> None:
    gated = GatedSummarizer()
    mm = MemoryManager(root, small_config(), summarizer=gated)
    ids: list[str] = []
    for n in range(4):
        ids += play_turn(mm, n)
    mm.request_maintenance()
    assert gated.entered.wait(30), "the background pass reached the summarizer"
    assert mm.maintenance_running
    # The pass is parked inside the summarizer; appends and more requests go on meanwhile.
    for n in range(4, 6):
        ids += play_turn(mm, n)
        mm.request_maintenance()
        mm.request_maintenance()
    gated.gate.set()
    assert mm.wait_for_maintenance(60)
    assert mm.telemetry.passes == 2, "requests during a pass coalesce into exactly one more"
    assert mm.telemetry.compactions >= 1
    assert_each_once(root, ids)
    hot_ids = [e["id"] for e in read_jsonl(root / "session" / "events.jsonl")]
    assert hot_ids[-1] == ids[-1], "events appended during the pass are kept, in order"


def test_commit_run_requests_maintenance(root: Path) -> None:
    mm = MemoryManager(root, small_config())
    ids: list[str] = []
    for n in range(3):
        ids += play_turn(mm, n)
    ids.append(mm.begin_run("last")["id"])
    ids.append(mm.commit_run("answer")["id"])
    assert mm.wait_for_maintenance(60)
    assert mm.telemetry.passes == 1 and mm.telemetry.compactions == 1
    assert_each_once(root, ids)


def test_focus_reaches_every_summary_call(root: Path) -> None:
    seen: list[str | None] = []

    class Recording(ExtractiveSummarizer):
        def summarize(self, events: Sequence[Event], **kw: Any) -> str:
            seen.append(kw.get("focus"))
            return super().summarize(events, **kw)

    mm = MemoryManager(
        root,
        small_config(count_compress_after_events=10, hot_window_events=5),
        summarizer=Recording(),
    )
    play_turn(mm, 0)
    play_turn(mm, 1, tools=8)
    result = mm.save(focus="keep wifi details")
    assert result.is_split_turn
    assert seen and all(f == "keep wifi details" for f in seen)
    assert len(seen) == 2, "history and turn prefix are summarised separately"


def test_failing_summarizer_falls_back_to_extractive(root: Path) -> None:
    class Broken:
        name = "openai"

        def summarize(self, events: Sequence[Event], **kw: Any) -> str:
            raise RuntimeError("model unavailable")

    mm = MemoryManager(root, small_config(), summarizer=Broken())
    for n in range(4):
        play_turn(mm, n)
    result = mm.save()
    assert result.compacted and result.summary_backend == "extractive-fallback"
    entry = yaml.safe_load((root / "session/chunks/index.yaml").read_text())["chunks"][0]
    assert entry["summary_backend"] == "extractive-fallback"
    assert entry["summary"].strip()


def test_screenshot_payload_is_scrubbed_on_append(root: Path) -> None:
    mm = MemoryManager(root, small_config())
    stored = mm.append(
        {
            "type": "tool_result",
            "name": "screenshot",
            "content": {"data": "iVBORw0KGgo" * 100, "width": 64, "height": 64, "format": "png"},
        }
    )
    assert "data" not in stored["content"] and stored["meta"]["scrubbed"] is True
    on_disk = read_jsonl(root / "session" / "events.jsonl")[0]
    assert "iVBORw0KGgo" not in str(on_disk)
