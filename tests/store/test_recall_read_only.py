"""A read-only recall (the `--read-only` TUI, the CLI's `recall`, `recall_once(read_only=True)`)
writes nothing under the memory root: recall.sqlite and its -wal/-shm sidecars are never
created, changed or deleted, whether the index is fresh, stale, missing or corrupt; the
answers still equal an in-memory build of the chunks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.manager import MemoryManager
from core.recall.sqlite_index import recall_once
from tests.helpers.paths import REPO
from tests.helpers.recall import QUERIES, compacted_root, config, fill, in_memory, index_file


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the memory root with its bytes (folders too, as empty entries)."""
    out: dict[str, bytes] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(folder, name), root) + "/"] = b""
        for name in files:
            path = os.path.join(folder, name)
            out[os.path.relpath(path, root)] = Path(path).read_bytes()
    return out


def stale_root(tmp_path: Path) -> Path:
    """A root whose last pass ran without the index hook: recall.sqlite lags one chunk."""
    root = compacted_root(tmp_path, passes=2)
    writer = MemoryManager(root, config())
    writer.persistent_recall = False
    fill(writer, 3, start=9)
    assert writer.save(force=True).compacted
    writer.close()
    return root


@pytest.mark.parametrize("state", ["fresh", "stale", "missing", "corrupt"])
def test_a_read_only_recall_leaves_every_file_byte_identical(tmp_path: Path, state: str) -> None:
    root = stale_root(tmp_path) if state == "stale" else compacted_root(tmp_path)
    path = index_file(root)
    if state == "missing":
        path.unlink()
    elif state == "corrupt":
        path.write_bytes(b"not a database " * 64)
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()
    before = snapshot(root)
    viewer = MemoryManager(root, config(), read_only=True)
    for q in [*QUERIES, "TKT-9", "module_10.py"]:
        assert viewer.recall(q, limit=10) == in_memory(root, q, limit=10), q
    assert viewer.recall("TKT-9").results, "the stale chunk is found"
    once = recall_once(root, "TKT-9", 10, read_only=True)
    if state in ("fresh", "stale"):
        assert once == in_memory(root, "TKT-9", limit=10)
    viewer.close()
    assert snapshot(root) == before, "no file created, changed or deleted"


def test_a_read_only_viewer_follows_a_writer_without_writing(tmp_path: Path) -> None:
    """A viewer kept open (the TUI) sees a later pass's chunk, through the file the writer
    updated, and never creates the sidecars itself."""
    root = compacted_root(tmp_path, passes=1)
    path = index_file(root)
    viewer = MemoryManager(root, config(), read_only=True)
    assert "TKT-5" not in json.dumps(viewer.recall("TKT-5").to_json())
    assert not Path(f"{path}-wal").exists()
    writer = MemoryManager(root, config())
    fill(writer, 3, start=4)
    assert writer.save(force=True).compacted
    writer.close()
    before = snapshot(root)
    assert viewer.recall("TKT-5", limit=10) == in_memory(root, "TKT-5", limit=10)
    assert "TKT-5" in json.dumps(viewer.recall("TKT-5").results[0].events)
    store = viewer.recall_service.files[root / "session"]
    assert not store.in_memory, "the file the writer brought up to date is read, not copied"
    viewer.close()
    assert snapshot(root) == before


def test_the_cold_path_parses_only_lines_that_can_match_and_answers_the_same(
    tmp_path: Path,
) -> None:
    """`recall_once` skips chunk lines without a query term, but never one whose term hides
    behind a JSON escape or a character NFKC folds (fullwidth letters)."""
    root = tmp_path / "m"
    mm = MemoryManager(root, config())
    for n in range(9):
        mm.begin_run(f"turn {n}: look at the build")
        mm.append({"type": "user_input", "content": f"plain line {n} without the name"})
        if n == 2:
            mm.append({"type": "user_input", "content": 'ran \\ "ＳｃａｎＦｉｘ.py" then ＳＣＡＮ'})
        if n == 5:
            mm.append({"type": "user_input", "content": 'said "scanfix.py" with\nquotes'})
        mm.commit_run(f"done {n}")
        mm.wait_for_maintenance()
        if n % 3 == 2:
            assert mm.save(force=True).compacted
    mm.close()
    for q in ["scanfix.py", "ScanFix", "scan", "plain line", '"look at"', "build 4"]:
        want = MemoryManager(root, config(), read_only=True).recall(q, limit=5)
        assert recall_once(root, q, 5) == want, q
    (hit, *_) = recall_once(root, "scanfix.py", 5).results  # type: ignore[union-attr]
    assert any("ＳｃａｎＦｉｘ" in str(e.get("content")) for e in hit.events) or any(
        "scanfix.py" in str(e.get("content")) for e in hit.events
    )


@pytest.mark.parametrize("name", ["chunk_0001.jsonl", "index.yaml"])
def test_a_fifo_in_place_of_a_store_file_never_hangs_a_cold_recall(
    tmp_path: Path, name: str
) -> None:
    """Files are opened non-blocking and must be regular: a FIFO (which would block a plain
    open until a writer comes) is an unreadable chunk, or an index the manager must judge."""
    root = compacted_root(tmp_path)
    target = root / "session" / "chunks" / name
    target.unlink()
    os.mkfifo(target)
    code = (
        "import sys\n"
        "from core.recall.sqlite_index import recall_once\n"
        "for ro in (True, False):\n"
        "    r = recall_once(sys.argv[1], 'camera', 5, read_only=ro)\n"
        "    print(r is None or all(h.chunk_id != 'chunk_0001' or not h.events "
        "for h in r.results))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "True"]
