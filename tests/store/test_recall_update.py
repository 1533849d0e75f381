"""How a pass's new chunk reaches recall.sqlite: from the entries the pass appended to
index.yaml, parsed alone; anything but an append (a rewrite, an in-place edit) is parsed whole
and rebuilds what changed. Answers always equal an in-memory build."""

from __future__ import annotations

from pathlib import Path

import pytest

import core.index.reader
from core.index.catalog import write_index
from core.index.reader import read_index
from core.manager import MemoryManager
from core.recall.sqlite_index import PersistentRecallIndex, read_chunk_file
from core.store.paths import MemoryPaths
from tests.helpers.recall import QUERIES, compacted_root, config, in_memory, pass_without_hook


def test_an_appended_entry_is_indexed_without_parsing_index_yaml_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = compacted_root(tmp_path, passes=2)
    chunks = root / "session" / "chunks"
    before = len(list(chunks.glob("chunk_*.jsonl")))
    pass_without_hook(root, 9)
    added = len(list(chunks.glob("chunk_*.jsonl"))) - before
    assert added >= 1

    def refuse(paths: MemoryPaths) -> object:
        raise AssertionError("index.yaml parsed whole for an append")

    monkeypatch.setattr(core.index.reader, "read_index", refuse)
    store = PersistentRecallIndex(MemoryPaths(root), read_chunk_file)
    report = store.refresh()
    store.close()
    assert report.added == added and not report.rebuilt
    monkeypatch.undo()
    for q in [*QUERIES, "TKT-10"]:
        fresh = MemoryManager(root, config(), read_only=True)
        assert fresh.recall(q, limit=10) == in_memory(root, q, limit=10), q


@pytest.mark.parametrize("how", ["rewritten", "edited_in_place"])
def test_a_changed_summary_is_seen_whatever_the_file_layout(tmp_path: Path, how: str) -> None:
    root = compacted_root(tmp_path, passes=2)
    paths = MemoryPaths(root)
    entries = read_index(paths).entries
    old = entries[0].summary
    new = "".join("q" if ch.isalpha() else ch for ch in old[:6]) + old[6:]
    assert len(new) == len(old) and new != old
    if how == "rewritten":
        entries[0].summary = new
        write_index(paths, entries)
    else:
        data = paths.index.read_bytes()
        at = data.index(old[:6].encode())
        with open(paths.index, "r+b") as f:
            f.seek(at)
            f.write(new[:6].encode())
    assert read_index(paths).entries[0].summary == new
    store = PersistentRecallIndex(paths, read_chunk_file)
    report = store.refresh()
    store.close()
    assert report.rebuilt
    for q in [*QUERIES, new[:6]]:
        fresh = MemoryManager(root, config(), read_only=True)
        assert fresh.recall(q, limit=10) == in_memory(root, q, limit=10), q
