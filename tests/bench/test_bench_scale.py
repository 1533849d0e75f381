"""The scale benchmark's fixture is a root the project itself reads as valid, and the scale group
reports every key as a number (issue 14).

No timing is asserted: timings live in the benchmark, never in pass/fail tests.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.common import make_events
from bench.scale import NoopSummarizer
from bench.scale_fixture import EVENTS_PER_CHUNK, HOT_EVENTS, build_root, copy_root
from bench.targets import GROUPS
from core.compaction.summaries import parse_summary_md
from core.config import CompactionConfig
from core.index.chunk_files import read_chunk_events
from core.index.reader import read_index
from core.manager import MemoryManager
from core.store.paths import MemoryPaths
from tests.helpers.bench import run_bench_quick

SCALE_KEYS = GROUPS["scale"]


@pytest.fixture(scope="module")
def small_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_root(tmp_path_factory.mktemp("scale") / "memory", 12, 2)


def test_fixture_is_a_root_the_project_reads_whole(small_root: Path) -> None:
    """Every chunk is indexed, readable and of the stated size; summaries parse; archives are
    real rotated sessions; status sees it all without a warning."""
    paths = MemoryPaths(small_root)
    index = read_index(paths)
    assert not index.warnings
    assert [e.chunk_id for e in index.entries] == [f"chunk_{i:04d}" for i in range(1, 13)]
    for entry in index.entries:
        events, corrupt = read_chunk_events(paths, entry.chunk_id)
        assert not corrupt
        assert len(events) == entry.event_count == EVENTS_PER_CHUNK
        assert events[0]["id"] == entry.first_event_id
        assert events[-1]["id"] == entry.last_event_id
        assert entry.summary.startswith("Goal:")
    kinds = {e["type"] for e in read_chunk_events(paths, "chunk_0001")[0]}
    assert kinds == {"user_input", "tool_call", "tool_result", "assistant_output"}
    parsed = parse_summary_md((small_root / "session" / "summary.md").read_text("utf-8"))
    assert not parsed.problems
    assert (small_root / "session" / "summary_archive.md").exists()
    archives = sorted(p for p in (small_root / "session_archive").iterdir() if p.is_dir())
    assert len(archives) == 2
    assert all((a / "chunks" / "index.yaml").exists() for a in archives)
    assert (small_root / "session" / "chunks" / "recall.sqlite").exists()
    manager = MemoryManager(small_root, CompactionConfig(), read_only=True)
    status = manager.status().to_json()
    manager.close()
    assert json.dumps(status)  # serializable, i.e. complete
    assert manager.store.warnings == []
    assert sum(1 for line in paths.events.read_bytes().splitlines() if line) == HOT_EVENTS


def test_compacting_and_rotating_a_copy_leaves_the_cached_root_alone(
    small_root: Path, tmp_path: Path
) -> None:
    """The bench rotates and compacts copies whose chunk files are hard links: the original must
    keep its session, its archives and its chunk files' contents."""
    before = _contents(small_root)
    copy = copy_root(small_root, tmp_path / "copy")
    link = copy / "session" / "chunks" / "chunk_0001.jsonl"
    assert link.stat().st_ino == (small_root / "session/chunks/chunk_0001.jsonl").stat().st_ino
    manager = MemoryManager(copy, CompactionConfig(), summarizer=NoopSummarizer())
    try:
        manager.append_many(make_events(300, prefix="copy"))
        assert manager.save().compacted
        assert manager.rotate().archive_path is not None
    finally:
        manager.close()
    assert len(list((copy / "session_archive").iterdir())) == 3
    after = _contents(small_root)
    assert set(after) ^ set(before) == set()
    assert [p for p in before if before[p] != after[p]] == []


def _contents(root: Path) -> dict[Path, bytes]:
    """Every file's bytes but SQLite's own (a reader's WAL checkpoint may touch recall.sqlite;
    the copy has its own, never a link)."""
    return {
        p.relative_to(root): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith("recall.sqlite")
    }


@pytest.mark.extended
def test_scale_group_reports_every_key_as_a_number() -> None:
    doc = run_bench_quick("--only", "scale")
    for key in SCALE_KEYS:
        value = doc[key]
        assert isinstance(value, int | float) and math.isfinite(value), (key, value, doc["notes"])
        assert value >= 0, (key, value)
        assert "50 chunks" in doc["notes"][key]
    assert doc["summary_md_within_bound_10k"] == 1
    curve = doc["details"]["scale"]["curve"]
    assert [row["chunks"] for row in curve] == [10, 50]
    assert all(row["status_cold_ms"] > 0 and row["pass_ms"] > 0 for row in curve)
