"""The persistent recall index chunks/recall.sqlite (issue 11): derived state that is checked
against the chunk files, rebuilt when stale or corrupt (answers equal an in-memory build),
kept up to date by passes, carried by rotation, rebuilt by repair, readable during a pass."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core.manager import MemoryManager
from tests.helpers.memory import SMALL, run_child
from tests.helpers.paths import MM_CHILD, REPO
from tests.helpers.recall import (
    QUERIES,
    assert_same_as_in_memory,
    compacted_root,
    config,
    fill,
    in_memory,
    index_file,
    indexed_ids,
)


def test_pass_writes_the_index_and_a_fresh_process_reads_no_chunk_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = compacted_root(tmp_path)
    chunks = sorted(p.stem for p in (root / "session" / "chunks").glob("chunk_*.jsonl"))
    assert indexed_ids(index_file(root)) == chunks, "each pass's hook added its chunk"

    import core.recall.service

    reads: list[str] = []
    real = core.recall.service.read_chunk_events
    monkeypatch.setattr(
        core.recall.service, "read_chunk_events", lambda p, c: reads.append(c) or real(p, c)
    )
    fresh = MemoryManager(root, config(), read_only=True)
    (hit,) = fresh.recall("module_4.py", limit=1).results
    assert reads == [hit.chunk_id], "only the returned chunk is read, for its events"
    assert [e["content"] for e in hit.events] == ["Traceback in src/module_4.py: camera busy"]
    monkeypatch.undo()
    assert_same_as_in_memory(root)
    assert fresh.recall_warnings == []


def test_a_pass_of_another_process_is_picked_up_incrementally(tmp_path: Path) -> None:
    root = compacted_root(tmp_path, passes=1)
    reader = MemoryManager(root, config(), read_only=True)
    assert "TKT-7" not in json.dumps(reader.recall("TKT-7").to_json())
    before = len(list((root / "session" / "chunks").glob("chunk_*.jsonl")))
    writer = MemoryManager(root, config())
    writer.persistent_recall = False  # a writer without the hook: the reader must catch up
    fill(writer, 3, start=6)
    assert writer.save(force=True).compacted
    hits = reader.recall("TKT-7").results
    assert hits and "TKT-7" in json.dumps(hits[0].events)
    store = reader.recall_service.files[root / "session"]
    new_chunks = len(list((root / "session" / "chunks").glob("chunk_*.jsonl"))) - before
    assert new_chunks >= 1
    assert store.last_sync.added == new_chunks and not store.last_sync.rebuilt
    assert_same_as_in_memory(root)


def change_the_oldest_chunk_file(root: Path) -> Path:
    """Rewrite the first event of the oldest chunk file behind the index's back, to mention
    `zanzibar_quokka.cfg` (in no other chunk); returns the file."""
    chunk = sorted((root / "session" / "chunks").glob("chunk_*.jsonl"))[0]
    lines = chunk.read_text().splitlines()
    event = json.loads(lines[0])
    event["content"] = "zanzibar_quokka.cfg was the culprit"
    lines[0] = json.dumps(event)
    chunk.write_text("\n".join(lines) + "\n")
    return chunk


def test_a_changed_chunk_file_makes_the_index_stale_and_it_is_rebuilt(tmp_path: Path) -> None:
    root = compacted_root(tmp_path)
    chunk = change_the_oldest_chunk_file(root)
    fresh = MemoryManager(root, config(), read_only=True)
    hits = fresh.recall("zanzibar_quokka.cfg").results
    assert [h.chunk_id for h in hits] == [chunk.stem]
    assert fresh.recall_service.files[root / "session"].last_sync.rebuilt
    assert_same_as_in_memory(root)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_corrupt_index_is_rebuilt_never_trusted(tmp_path: Path, damage: str) -> None:
    root = compacted_root(tmp_path)
    path = index_file(root)
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a database at all " * 100)
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        path.write_bytes(b"")
    damaged = path.read_bytes()
    viewer = MemoryManager(root, config(), read_only=True)
    for q in QUERIES:
        assert viewer.recall(q, limit=10) == in_memory(root, q, limit=10), q
    assert path.read_bytes() == damaged, "a read-only recall leaves the file to a writer"
    fresh = MemoryManager(root, config())
    for q in QUERIES:
        assert fresh.recall(q, limit=10) == in_memory(root, q, limit=10), q
    chunks = sorted(p.stem for p in (root / "session" / "chunks").glob("chunk_*.jsonl"))
    assert indexed_ids(path) == chunks, "the file was built again"


def test_an_unusable_index_falls_back_to_memory_with_a_warning(tmp_path: Path) -> None:
    root = compacted_root(tmp_path)
    path = index_file(root)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.mkdir()  # cannot be opened, deleted or created
    fresh = MemoryManager(root, config(), read_only=True)
    for q in QUERIES:
        assert fresh.recall(q, limit=10) == in_memory(root, q, limit=10), q
    assert fresh.recall_warnings and str(path) in fresh.recall_warnings[0]


@pytest.mark.parametrize("fault", ["after_chunk_write", "after_index_write"])
def test_crash_between_chunk_write_and_index_update(tmp_path: Path, fault: str) -> None:
    """The pass dies before its hook: the next recall brings the index up to date, and a
    repair (which finishes the pass) leaves answers equal to an in-memory build."""
    root = compacted_root(tmp_path, passes=1)
    mm = MemoryManager(root, config())
    fill(mm, 3, start=10)
    mm.close()
    done = run_child(root, "save", "--force", fault=fault)
    assert done.returncode == 99, done.stderr
    assert_same_as_in_memory(root)
    hits = MemoryManager(root, config(), read_only=True).recall("TKT-11").results
    assert hits, "the crashed pass's events are recallable (indexed or pending)"
    MemoryManager(root, config()).repair()
    assert_same_as_in_memory(root)
    assert MemoryManager(root, config(), read_only=True).recall("TKT-11").results


def test_rotation_carries_the_index_and_all_sessions_names_each_session(tmp_path: Path) -> None:
    root = compacted_root(tmp_path, passes=2)
    mm = MemoryManager(root, config())
    old_id = mm.status().session_id
    before = indexed_ids(index_file(root))
    mm.rotate()
    archived = index_file(root, f"session_archive/{old_id}")
    assert indexed_ids(archived) == before, "the rename carried the index"
    fill(mm, 3, start=40)
    assert mm.save(force=True).compacted
    new_id = mm.status().session_id

    default = json.dumps(mm.recall("TKT-1", limit=20).to_json())
    assert not re.search(r"TKT-1\b", default), "the default never searches archives"
    assert "session_id" not in default
    result = mm.recall("TKT-1", all_sessions=True)
    assert result.results and result.results[0].session_id == old_id
    assert re.search(r"TKT-1\b", json.dumps(result.results[0].events))
    assert result.results[0].archived is True
    assert result.results[0].to_json()["session_id"] == old_id
    mixed = mm.recall("ticket camera", limit=20, all_sessions=True).results
    assert {(h.session_id, h.archived) for h in mixed} == {(old_id, True), (new_id, False)}
    store = mm.recall_service.files[root / "session_archive" / str(old_id)]
    assert store.last_sync.added == 0 and not store.last_sync.rebuilt, "used as it was"
    assert_same_as_in_memory(root, all_sessions=True)


def test_repair_rebuilds_the_index(tmp_path: Path) -> None:
    root = compacted_root(tmp_path)
    index_file(root).write_bytes(b"\0" * 4096)
    repaired = MemoryManager(root, config()).repair()
    assert repaired.get("recall_index_rebuilt") == 1
    chunks = sorted(p.stem for p in (root / "session" / "chunks").glob("chunk_*.jsonl"))
    assert indexed_ids(index_file(root)) == chunks
    assert_same_as_in_memory(root)


def test_recall_during_passes_of_another_process(tmp_path: Path) -> None:
    """Recall keeps answering (never an error, every hit well formed) while a child process
    runs passes that add chunks and update the index."""
    root = compacted_root(tmp_path, passes=1)
    mm = MemoryManager(root, config())
    fill(mm, 12, start=20)
    mm.close()
    child = subprocess.Popen(
        [sys.executable, str(MM_CHILD), str(root), json.dumps(SMALL), "saves", "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    reader = MemoryManager(root, config(), read_only=True)
    answered = 0
    while child.poll() is None or answered < 5:
        result = reader.recall("ticket camera", limit=10)
        assert all(
            h.source in ("active", "pending") and h.summary is not None for h in result.results
        )
        answered += 1
    _out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert reader.recall_warnings == []
    assert_same_as_in_memory(root)


def test_recall_once_gives_the_managers_answer_without_importing_it(tmp_path: Path) -> None:
    """The cold path of an agent's recall tool: same answers, no store or manager imported;
    it steps aside (None) when pending evidence or a missing index needs the manager."""
    from core.recall.sqlite_index import recall_once

    root = compacted_root(tmp_path)
    for q in QUERIES:
        got = recall_once(root, q, 10)
        assert got == MemoryManager(root, config(), read_only=True).recall(q, limit=10), q
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1])\n"
        "from core.recall.sqlite_index import recall_once\n"
        "r = recall_once(sys.argv[2], 'module_4.py')\n"
        "print(json.dumps([r.results[0].chunk_id, sorted(m for m in sys.modules "
        "if m in ('core.store.session_store', 'core.manager', 'core.index.reader', "
        "'core.index.format', "
        "'core.maintenance.compaction_pass'))]))"
    )
    repo = str(REPO)
    proc = subprocess.run(
        [sys.executable, "-c", code, repo, str(root)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    top, heavy = json.loads(proc.stdout)
    assert (
        top
        == MemoryManager(root, config(), read_only=True).recall("module_4.py").results[0].chunk_id
    )
    assert heavy == []
    pending = root / "session" / "chunks" / "pending"
    pending.mkdir(exist_ok=True)
    (pending / "p-1.jsonl").write_text("")
    assert recall_once(root, "camera") is None
    assert recall_once(tmp_path / "nothing", "camera") is None


def test_a_writer_elsewhere_is_not_mistaken_for_corruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While another process holds the index's write lock past the timeout, a recall that
    needs to update it answers from the chunk files (with a warning) and leaves the file to
    its writer; once the lock is gone the index catches up."""
    import core.recall.sqlite_index as ri

    root = compacted_root(tmp_path, passes=1)
    writer = MemoryManager(root, config())
    writer.persistent_recall = False
    fill(writer, 3, start=6)
    assert writer.save(force=True).compacted  # the index now lags behind index.yaml
    path = index_file(root)
    inode = path.stat().st_ino
    monkeypatch.setattr(ri, "BUSY_TIMEOUT_MS", 200)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        reader = MemoryManager(root, config())
        assert reader.recall("TKT-7", limit=10) == in_memory(root, "TKT-7", limit=10)
        assert any("another process is updating it" in w for w in reader.recall_warnings)
        assert path.stat().st_ino == inode, "the file was left to its writer"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    later = MemoryManager(root, config())
    assert later.recall("TKT-7", limit=10) == in_memory(root, "TKT-7", limit=10)
    assert later.recall_warnings == []


def test_a_pass_hook_adds_its_chunk_alone_and_the_next_query_still_checks_the_files(
    tmp_path: Path,
) -> None:
    """The hook does not stat every chunk file (the cost that grew with history); a chunk file
    changed behind the index's back is still caught, by the query, before it answers."""
    root = compacted_root(tmp_path, passes=1)
    writer = MemoryManager(root, config())
    writer.recall("module_4.py")
    old = change_the_oldest_chunk_file(root)
    fill(writer, 3, start=6)
    assert writer.save(force=True).compacted
    store = writer.recall_service.files[root / "session"]
    assert store.last_sync.added >= 1 and not store.last_sync.rebuilt, "the append alone"
    hits = writer.recall("zanzibar_quokka.cfg").results
    assert [h.chunk_id for h in hits] == [old.stem]
    assert store.last_sync.rebuilt, "the query found the changed file and rebuilt"
    assert_same_as_in_memory(root)
