"""A child process dies at each fault point of a pass; recovery loses nothing, doubles nothing
(contract §8). The children are real processes that exit through os._exit(99)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import CompactionConfig
from core.manager import MemoryManager
from core.store.faults import FAULT_POINTS
from tests.helpers.invariants import assert_each_once, indexed_chunk_ids, stored_id_counts
from tests.helpers.memory import SMALL, fill, run_child

PASS_POINTS = [p for p in FAULT_POINTS if p != "during_rotation"]


@pytest.mark.parametrize("point", PASS_POINTS)
@pytest.mark.parametrize("recover_with", ["pass", "repair"])
def test_crash_at_fault_point_then_recovery(tmp_path: Path, point: str, recover_with: str) -> None:
    root = tmp_path / "memory"
    mm = MemoryManager(root, CompactionConfig(**SMALL))
    ids = fill(mm, 4)
    if point != "after_pending_write":
        # one clean compaction first, so the crash happens with history already indexed
        assert mm.save().compacted
        ids += fill(mm, 3, start=4)

    crashed = run_child(root, "save", fault=point)
    assert crashed.returncode == 99, crashed.stderr

    # Before recovery: every event is still somewhere (hot window, chunk or pending evidence).
    reachable = stored_id_counts(root, include_pending=True)
    assert all(reachable[i] >= 1 for i in ids), "an event became unreachable after the crash"
    if point in ("after_events_replace", "after_chunk_write"):
        # Evidence cut from the hot window but not indexed is recalled as pending.
        result = mm.recall("camera error code", limit=10)
        assert any(hit.source == "pending" for hit in result.results)
        assert result.pending_chunks_recalled == sum(
            1 for hit in result.results if hit.source == "pending"
        )

    appended_after = fill(mm, 1, start=50)
    ids += appended_after
    if recover_with == "pass":
        mm.save()
    else:
        mm.repair()

    assert not list((root / "session" / "chunks" / "pending").glob("*")), "pending left behind"
    assert_each_once(root, ids)
    for chunk_id in indexed_chunk_ids(root / "session"):
        assert (root / "session" / "chunks" / f"{chunk_id}.jsonl").exists()
    # Everything compacted is recallable from an indexed chunk now.
    result = mm.recall("camera error code", limit=50)
    assert all(hit.source == "active" for hit in result.results)
    chunks = indexed_chunk_ids(root / "session")
    if chunks:
        summary = (root / "session" / "summary.md").read_text(encoding="utf-8")
        for chunk_id in chunks[-2:]:
            assert f"- **{chunk_id}**" in summary


def test_crash_during_rotation_then_next_session_starts(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm = MemoryManager(root, CompactionConfig(**SMALL))
    ids = fill(mm, 2)
    crashed = run_child(root, "rotate", fault="during_rotation")
    assert crashed.returncode == 99, crashed.stderr
    assert not (root / "session").exists(), "the rename happened before the crash"
    ids += fill(mm, 1, start=10)  # the next append recreates the active session
    assert (root / "session" / "events.jsonl").exists()
    assert len(list((root / "session_archive").iterdir())) == 1
    assert_each_once(root, ids)
    result = mm.rotate()
    assert result.closed_session_id is not None
    assert_each_once(root, ids)


def test_rotate_with_no_session_reports_null(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    mm = MemoryManager(root, CompactionConfig(**SMALL))
    result = mm.rotate()
    assert result.closed_session_id is None and result.archive_path is None
    assert (root / "session" / "events.jsonl").read_bytes() == b""


def test_orphan_chunk_file_is_reconciled(tmp_path: Path) -> None:
    """A chunk file nobody indexed, whose events are gone from the hot window, is indexed;
    one whose events are all still hot is dropped (they are not lost: they are hot)."""
    root = tmp_path / "memory"
    mm = MemoryManager(root, CompactionConfig(**SMALL))
    ids = fill(mm, 3)
    chunks = root / "session" / "chunks"
    chunks.mkdir(parents=True, exist_ok=True)
    hot_lines = (root / "session" / "events.jsonl").read_text().splitlines()
    (chunks / "chunk_0042.jsonl").write_text("\n".join(hot_lines[:2]) + "\n")
    lost = {"id": "ev_orphan_1", "type": "assistant_output", "content": "orphaned evidence"}
    (chunks / "chunk_0043.jsonl").write_text(json.dumps(lost) + "\n")
    repaired = mm.repair()
    assert repaired.get("orphan_chunks_deleted") == 1
    assert repaired.get("orphan_chunks_indexed") == 1
    assert indexed_chunk_ids(root / "session") == ["chunk_0043"]
    assert_each_once(root, [*ids, "ev_orphan_1"])
