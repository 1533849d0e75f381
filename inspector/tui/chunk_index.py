"""index.yaml for the TUI: core's reader behind a stat-keyed cache, a first page, a count.

The index is read by `core.index.chunks.read_index` (the writer's shape scanned by core.index.scan,
anything else by the strict YAML loader): one route, one answer. What is the inspector's own
sits on top: a status poll or a tab switch with an unchanged index costs one stat (core's own
cache still reads and digests the whole file); the Chunks tab puts its first page on screen
from the head of the file before the rest is read; and the header's count comes from core's
catalog or the `- chunk_id:` lines, without building any entry.

    read_chunk_index(paths) -> IndexRead     # core.index.chunks.read_index, cached by stat
    read_chunk_index_head(paths, n) -> list[ChunkEntry] | None   # a first page, before the rest
    chunk_count(paths) -> int                # entries, via the cache (IndexCorruptError…)
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import yaml

from core.errors import SessionMemoryError
from core.index.catalog import catalog_path, read_catalog
from core.index.chunks import ChunkEntry, IndexRead, read_index
from core.index.scan import Unrecognised, decode_index, load_entry, scan_scalar, split_index
from core.store.atomic import open_no_symlink, read_bytes_no_symlink
from core.store.paths import CHUNK_ID_MAX_LEN, CHUNK_ID_RE, MemoryPaths

_CACHE: dict[str, tuple[tuple[int, int, int], IndexRead]] = {}
_GUARD = threading.Lock()


def _copy(read: IndexRead) -> IndexRead:
    """Entries are shared with the cache; the lists are the caller's own."""
    return IndexRead(list(read.entries), list(read.warnings), exists=read.exists)


def read_chunk_index(paths: MemoryPaths, *, cache: bool = True) -> IndexRead:
    """index.yaml's entries, as `read_index` gives them (it is the reader), kept by the
    file's size, mtime and inode. Entries are shared with the cache: treat them as read-only.
    cache=False for a file read once (an archived session's, cached by its caller), so it
    never evicts the active one."""
    path = paths.index
    paths.ensure_inside_root(paths.chunks_dir)
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return read_index(paths)  # missing (empty result) or unreadable: core's own answer
    key = (st.st_size, st.st_mtime_ns, st.st_ino)
    with _GUARD:
        cached = _CACHE.get(str(path))
    if cached is not None and cached[0] == key:
        return _copy(cached[1])
    read = read_index(paths)
    if cache:
        with _GUARD:
            if len(_CACHE) > 16:
                _CACHE.clear()
            _CACHE[str(path)] = (key, read)
    return _copy(read)


HEAD_BLOCK = 256 * 1024


def _head_bytes(path: Path, n: int) -> bytes:
    """The start of index.yaml up to (not including) its (n+1)th entry, or the whole file;
    read in blocks, so a first page of a 40 MB index reads a few hundred KB."""
    data = b""
    with os.fdopen(open_no_symlink(path, os.O_RDONLY), "rb") as fh:
        while block := fh.read(HEAD_BLOCK):
            data += block
            at, found = 0, 0
            while (at := data.find(b"\n- ", at)) >= 0:
                found += 1
                at += 1
                if found > n:
                    return data[:at]
    return data


def read_chunk_index_head(paths: MemoryPaths, n: int) -> list[ChunkEntry] | None:
    """The first `n` entries alone, for a first page on screen while the rest is read; None
    when the whole index is cached already (read it instead) or is not in the writer's shape.
    Entries that would be skipped are left out silently: the full read reports them."""
    path = paths.index
    paths.ensure_inside_root(paths.chunks_dir)
    try:
        st = os.stat(path, follow_symlinks=False)
        with _GUARD:
            cached = _CACHE.get(str(path))
        if cached is not None and cached[0] == (st.st_size, st.st_mtime_ns, st.st_ino):
            return None
        text = decode_index(_head_bytes(path, n))
    except OSError:
        return None
    split = None if text is None else split_index(text)
    if split is None:
        return None
    out: list[ChunkEntry] = []
    seen: set[str] = set()
    for entry_text in split[1]:
        try:
            entry = ChunkEntry.from_dict(load_entry(entry_text), str(path))
        except (yaml.YAMLError, RecursionError, SessionMemoryError):
            continue
        if entry.chunk_id not in seen:
            seen.add(entry.chunk_id)
            out.append(entry)
    return out


_ID_LINE = re.compile(rb"\n- chunk_id: ([^\n]*)")


def _quick_count(data: bytes) -> int | None:
    """Entries read_index would keep (valid, first of their id), from the `- chunk_id:` lines
    alone; None unless every entry starts with one in the emitter's shape."""
    if not data.startswith(b"version: ") or b"\nchunks:\n- chunk_id: " not in data[:64]:
        return None
    ids = _ID_LINE.findall(data)
    if len(ids) != data.count(b"\n- ") or b"\n..." in data or b"\n---" in data:
        return None
    seen: set[str] = set()
    try:
        for raw in ids:
            value = scan_scalar(raw.decode("utf-8"))
            valid = isinstance(value, str) and len(value) <= CHUNK_ID_MAX_LEN
            if valid and CHUNK_ID_RE.fullmatch(value):
                seen.add(value)
    except (Unrecognised, UnicodeDecodeError):
        return None
    return len(seen)


def chunk_count(paths: MemoryPaths, *, cache: bool = True) -> int:
    """How many chunks the index holds (IndexCorruptError / StoreError as read_index).
    From core's chunks/index.catalog when a pass left one (~20 ms cold at 10k chunks, never
    written from here); else from this module's cache when the file did not change; else
    counted from its `- chunk_id:` lines (ids validated and deduplicated as read_index does)
    without building the entries. A file not in the emitter's shape gets the full read."""
    path = paths.index
    paths.ensure_inside_root(paths.chunks_dir)
    if catalog_path(paths).is_file():
        return len(read_catalog(paths, write=False))
    try:
        st = os.stat(path, follow_symlinks=False)
        with _GUARD:
            cached = _CACHE.get(str(path))
        if cached is not None and cached[0] == (st.st_size, st.st_mtime_ns, st.st_ino):
            return len(cached[1].entries)
        quick = _quick_count(read_bytes_no_symlink(path))
    except OSError:
        quick = None
    if quick is not None:
        return quick
    return len(read_chunk_index(paths, cache=cache).entries)


__all__ = ["chunk_count", "read_chunk_index", "read_chunk_index_head"]
