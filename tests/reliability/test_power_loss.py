"""Power loss (issue 12): what the `durability` setting syncs, checked against a model of the
disk, and a recovery that does not rely on two renames in one folder reaching the disk
together.

The model: a write lands in the page cache; only an fsync/fdatasync of the file makes its
bytes durable. events.jsonl is append-only between rewrites (and every rewrite is staged,
fsynced and renamed), so "what survives a power cut" is the file cut at the size it had at
its last sync. `SyncModel` wraps `os.fsync`/`os.fdatasync` to record that size per inode.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.manager import MemoryManager
from inspector.cli.commands import main as cli_main
from tests.helpers.invariants import assert_each_once
from tests.helpers.memory import crashed_second_pass
from tests.helpers.reliability import small_config, write_small_config


class SyncModel:
    """Durable size per (device, inode), as the last fsync of that file left it."""

    def __init__(self) -> None:
        self.durable: dict[tuple[int, int], int] = {}
        self.synced = threading.Event()
        self.calls = 0

    def record(self, fd: int) -> None:
        st = os.fstat(fd)
        self.durable[(st.st_dev, st.st_ino)] = st.st_size
        self.calls += 1
        self.synced.set()

    def survives(self, path: Path) -> bytes:
        """What a power cut now would leave of `path`: its bytes up to the last sync."""
        st = path.stat()
        return path.read_bytes()[: self.durable.get((st.st_dev, st.st_ino), 0)]


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[SyncModel]:
    tracker = SyncModel()
    real_fsync = os.fsync
    real_fdatasync = os.fdatasync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        tracker.record(fd)

    def fdatasync(fd: int) -> None:
        real_fdatasync(fd)
        tracker.record(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    yield tracker


def events_file(root: Path) -> Path:
    return root / "session" / "events.jsonl"


def test_always_every_append_is_durable_when_it_returns(tmp_path: Path, model: SyncModel) -> None:
    root = tmp_path / "memory"
    mm = MemoryManager(root, small_config(durability="always"))
    for n in range(5):
        mm.append({"type": "assistant_output", "content": f"step {n}"})
        assert model.survives(events_file(root)) == events_file(root).read_bytes(), n


def test_run_commit_run_makes_the_run_durable(tmp_path: Path, model: SyncModel) -> None:
    root = tmp_path / "memory"
    mm = MemoryManager(root, small_config(durability="run", fsync_interval_ms=60_000))
    mm.begin_run("open the camera app")
    mm.append({"type": "assistant_output", "content": "thinking"})
    mm.commit_run("opened it")
    assert model.survives(events_file(root)) == events_file(root).read_bytes()
    mm.close()


def test_run_a_background_flush_syncs_within_the_interval(tmp_path: Path, model: SyncModel) -> None:
    root = tmp_path / "memory"
    mm = MemoryManager(root, small_config(durability="run", fsync_interval_ms=50))
    mm.store.ensure_session()
    model.synced.clear()
    mm.append({"type": "assistant_output", "content": "no commit follows"})
    # The append itself did not wait on the disk; the flush comes on its own. Any fsync sets
    # the event (another test's flusher thread may still be finishing), so wait for this file's.
    deadline = time.monotonic() + 10
    while model.survives(events_file(root)) != events_file(root).read_bytes():
        model.synced.clear()
        if model.survives(events_file(root)) == events_file(root).read_bytes():
            break
        left = deadline - time.monotonic()
        assert left > 0 and model.synced.wait(timeout=left), "no background flush"


def test_run_a_cli_append_is_durable_when_it_exits(
    tmp_path: Path, model: SyncModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "memory"
    config = tmp_path / "extraction.yaml"
    config.write_text(
        "session_compaction:\n  durability: run\n  fsync_interval_ms: 60000\n", encoding="utf-8"
    )
    monkeypatch.delenv("SESSION_MEMORY_DIR", raising=False)
    code = cli_main(
        ["--memory-dir", str(root), "--config", str(config), "append", "--type", "user_input",
         "--text", "remember the error code E42"]
    )  # fmt: skip
    assert code == 0
    assert b"E42" in model.survives(events_file(root))


def test_relaxed_leaves_appends_to_the_os(tmp_path: Path, model: SyncModel) -> None:
    """The documented cost of `relaxed`: no sync at all on the append path."""
    root = tmp_path / "memory"
    mm = MemoryManager(root, small_config(durability="relaxed"))
    mm.store.ensure_session()
    before = model.calls
    for n in range(5):
        mm.append({"type": "assistant_output", "content": f"step {n}"})
    mm.close()
    assert model.calls == before
    assert model.survives(events_file(root)) == b""


def test_a_pass_cut_off_between_its_index_and_its_chunk_file_loses_nothing(
    tmp_path: Path,
) -> None:
    """A pass renames index.yaml and links the chunk file in the same folder and syncs the
    folder once after both: a power cut can keep the index and lose the chunk file. The
    pending evidence (deleted only after that sync) must then become the chunk again."""
    root = tmp_path / "memory"
    mm, ids = crashed_second_pass(root, "after_index_write")
    chunks = root / "session" / "chunks"
    newest = sorted(p for p in chunks.glob("chunk_*.jsonl"))[-1]
    newest.unlink()  # the link that did not reach the disk
    write_small_config(root)
    repaired = mm.repair()
    assert repaired.get("chunk_files_restored") == 1, repaired
    assert_each_once(root, ids)
