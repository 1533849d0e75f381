"""index.yaml's one freshness stamp and the one "entries appended since" (core.index.stamp),
used by the catalog and recall.sqlite alike; and the one cache helper (core.store.stat_cache)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

import core.index.reader
from core.index.catalog import catalog_path, write_index
from core.index.format import ChunkEntry, entry_text, render_index
from core.index.reader import read_index, read_index_shared
from core.index.stamp import TAIL_BYTES, IndexStamp, appended_since, read_stamp
from core.recall.sqlite_index import PersistentRecallIndex, index_path, read_chunk_file
from core.store.paths import MemoryPaths
from core.store.stat_cache import StatCache, stat_key
from tests.helpers.recall import compacted_root, pass_without_hook


def entry(n: int, summary: str = "did a thing") -> ChunkEntry:
    return ChunkEntry(f"chunk_{n:04d}", "2026-01-01T00:00:00Z", 2, f"e{n}a", f"e{n}b", summary)


def written(tmp_path: Path, count: int = 3) -> MemoryPaths:
    paths = MemoryPaths(tmp_path / "m")
    write_index(paths, [entry(i) for i in range(1, count + 1)])
    return paths


def test_the_stamp_of_a_file_names_its_inode_end_and_last_bytes(tmp_path: Path) -> None:
    paths = written(tmp_path)
    data = paths.index.read_bytes()
    stamp = read_stamp(paths.index)
    assert stamp is not None
    assert (stamp.ino, stamp.end) == (os.stat(paths.index).st_ino, len(data))
    assert stamp.tail == hashlib.blake2b(data[-TAIL_BYTES:], digest_size=12).hexdigest()
    assert IndexStamp.parse(stamp.text()) == stamp
    assert read_stamp(tmp_path / "missing.yaml") is None
    for bad in ("", None, "1:2", "a:b:c", "1:2:3:4"):
        assert IndexStamp.parse(bad) is None


def test_appended_since_gives_the_new_entries_alone(tmp_path: Path) -> None:
    paths = written(tmp_path)
    before = read_stamp(paths.index)
    assert before is not None
    grown = paths.index.read_bytes() + entry_text(entry(4)) + entry_text(entry(5))
    with open(paths.index, "ab") as fh:  # in place: the same inode, as a pass appends
        fh.write(entry_text(entry(4)) + entry_text(entry(5)))
    found = appended_since(paths.index, before, ["chunk_0001", "chunk_0002", "chunk_0003"])
    assert found is not None
    assert [e.chunk_id for e, _, _ in found.entries] == ["chunk_0004", "chunk_0005"]
    for e, start, end in found.entries:
        assert grown[start:end] == entry_text(e)
    assert found.stamp() == read_stamp(paths.index)
    assert found.stamp(found.entries[0][2]).end == found.entries[0][2]
    assert [e.chunk_id for e in read_index(paths).entries][-2:] == ["chunk_0004", "chunk_0005"]
    unchanged = appended_since(paths.index, found.stamp(), ["chunk_0004"])
    assert unchanged is not None and unchanged.entries == []


@pytest.mark.parametrize(
    "change", ["rewritten", "edited_before_the_end", "shorter", "by_hand", "repeated_id"]
)
def test_anything_but_an_append_is_left_to_a_full_read(tmp_path: Path, change: str) -> None:
    paths = written(tmp_path)
    before = read_stamp(paths.index)
    assert before is not None
    data = paths.index.read_bytes()
    if change == "rewritten":  # a whole write: another inode, even with the same bytes
        write_index(paths, [entry(i) for i in range(1, 4)])
        assert paths.index.read_bytes() == data
    elif change == "edited_before_the_end":
        with open(paths.index, "r+b") as fh:
            fh.seek(len(data) - 5)
            fh.write(b"X")
            fh.seek(0, 2)
            fh.write(entry_text(entry(4)))
    elif change == "shorter":
        os.truncate(paths.index, len(data) - 10)
    elif change == "by_hand":
        with open(paths.index, "ab") as fh:
            fh.write(b"# a comment\n" + entry_text(entry(4)))
    else:
        with open(paths.index, "ab") as fh:
            fh.write(entry_text(entry(3)))
    assert appended_since(paths.index, before, ["chunk_0001", "chunk_0002", "chunk_0003"]) is None


def test_the_catalog_and_recall_sqlite_keep_the_same_stamp(tmp_path: Path) -> None:
    """After a pass appended its entry, both derived files stamp index.yaml alike: the
    catalog's last line (inode, end, tail) and recall.sqlite's `index_end`."""
    root = compacted_root(tmp_path, passes=2)
    pass_without_hook(root, 9)
    paths = MemoryPaths(root)
    store = PersistentRecallIndex(paths, read_chunk_file)
    store.refresh()
    store.close()
    with sqlite3.connect(index_path(paths)) as conn:
        [(index_end,)] = conn.execute("SELECT v FROM meta WHERE k = 'index_end'").fetchall()
    last = json.loads(catalog_path(paths).read_bytes().splitlines()[-1])
    now = read_stamp(paths.index)
    assert now is not None
    assert index_end == now.text() == IndexStamp(last["ino"], last["e"], last["tail"]).text()


def test_a_stored_stamp_it_cannot_use_costs_a_full_read_never_an_error(tmp_path: Path) -> None:
    """recall.sqlite's `index_end` keeps its format (`ino:end:digest`, as before this module);
    a value it cannot use (another format, damaged) means the whole index is read and the
    chunks added, with the same answers."""
    root = compacted_root(tmp_path, passes=2)
    paths = MemoryPaths(root)
    store = PersistentRecallIndex(paths, read_chunk_file)
    store.refresh()
    store.close()
    with sqlite3.connect(index_path(paths)) as conn:
        conn.execute("UPDATE meta SET v = 'stamp-of-another-version' WHERE k = 'index_end'")
    pass_without_hook(root, 9)
    store = PersistentRecallIndex(paths, read_chunk_file)
    report = store.refresh()
    ids = store.chunk_ids()
    store.close()
    assert report.added >= 1 and not report.rebuilt
    assert ids == [e.chunk_id for e in read_index(paths).entries]
    with sqlite3.connect(index_path(paths)) as conn:
        [(index_end,)] = conn.execute("SELECT v FROM meta WHERE k = 'index_end'").fetchall()
    now = read_stamp(paths.index)
    assert now is not None and index_end == now.text()


def test_the_reader_shares_its_cache_by_stat_and_copies_by_digest(tmp_path: Path) -> None:
    paths = written(tmp_path)
    core.index.reader._CACHE.clear()
    first = read_index(paths)
    assert read_index(paths).entries[0] is not first.entries[0]  # copies, one parse
    shared = read_index_shared(paths)
    assert read_index_shared(paths).entries[0] is shared.entries[0]  # the cache's own
    assert shared.entries == first.entries
    os.utime(paths.index, ns=(1, 1))  # another stat, the same bytes: read, not parsed again
    assert read_index_shared(paths).entries == first.entries
    assert render_index(read_index(paths).entries).encode() == paths.index.read_bytes()


def test_stat_cache_answers_only_under_the_key_it_was_given(tmp_path: Path) -> None:
    cache: StatCache[str] = StatCache(2)
    cache.put("a", (1, 2, 3), "one")
    assert cache.get("a", (1, 2, 3)) == "one"
    assert cache.get("a", (1, 2, 4)) is None
    assert cache.get("a", None) is None
    assert cache.peek("a") == ((1, 2, 3), "one")
    cache.put("b", None, "never kept")
    assert cache.peek("b") is None
    for name in "bcd":
        cache.put(name, 1, name)
    assert cache.peek("a") is None and cache.get("d", 1) == "d"  # past the limit: cleared
    f = tmp_path / "f"
    f.write_text("x")
    st = os.stat(f)
    assert stat_key(f) == (st.st_ino, st.st_size, st.st_mtime_ns)
    assert stat_key(tmp_path / "missing") is None
