"""index.yaml read (contract §6): the one reader, its cache, a first page and a count.

The index is scanned by core.index.scan when it is in the writer's shape, else read with the
strict safe loader (core.yaml_safe) only: a tag that would construct a Python object is
refused, never run; both routes give the same answer. One cache (core.store.stat_cache) keeps
the last parse of each file, under the file's stat and with a digest of its bytes:
`read_index` reads the file every time and parses it only when its bytes changed (a pass, a
prompt and a status all read it); `read_index_shared` answers from a stat alone when the file
did not change (the TUI polls); `read_index_head` gives a first page from the start of the file
before the rest is read, and `count_index` the number of entries without building them.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from core.errors import IndexCorruptError, StoreError
from core.index.format import (
    INDEX_VERSION,
    ChunkEntry,
    IndexRead,
    collect_entries,
    count_entries,
    head_end,
    head_entries,
)
from core.index.scan import scan_index
from core.store.atomic import open_no_symlink, read_bytes_no_symlink
from core.store.paths import MemoryPaths
from core.store.stat_cache import StatCache, stat_key
from core.yaml_safe import strict_load

_REPAIR_HINT = "run `session-inspector repair`"


@dataclass(frozen=True)
class _Parsed:
    """One parse of index.yaml: the digest of the bytes parsed, the entries (never handed
    out by `read_index`, which copies them) and the warnings."""

    digest: bytes
    entries: list[ChunkEntry]
    warnings: list[str]


_CACHE: StatCache[_Parsed] = StatCache(16)


def _index_error(path: Path, what: str) -> IndexCorruptError:
    return IndexCorruptError(f"{path}: {what}; {_REPAIR_HINT}")


def _copy_entry(entry: ChunkEntry) -> ChunkEntry:
    """A copy whose mappings are its own (the constructor, not dataclasses.replace: 10,000
    of them per cold read of a long index)."""
    return ChunkEntry(
        entry.chunk_id,
        entry.created_at,
        entry.event_count,
        entry.first_event_id,
        entry.last_event_id,
        entry.summary,
        dict(entry.cut_meta) if entry.cut_meta is not None else None,
        dict(entry.extra),
    )


def read_index(paths: MemoryPaths) -> IndexRead:
    """Entries of index.yaml; IndexCorruptError when the file as a whole cannot be used.

    Single bad entries (not a mapping, invalid id, duplicate id) are skipped with a warning.
    The file is read every time, but parsed only when its bytes changed (a digest-keyed cache:
    a pass, a prompt and a status all read the index, and parsing 1,000 entries takes tens of
    milliseconds); callers get their own copies of the entries.
    """
    path = paths.index
    paths.ensure_inside_root(paths.chunks_dir)
    key = stat_key(path)  # before the read: a change after it makes the key stale, not wrong
    try:
        data = read_bytes_no_symlink(path)
    except FileNotFoundError:
        return IndexRead([], [], exists=False)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    digest = hashlib.blake2b(data, digest_size=16).digest()
    found = _CACHE.peek(str(path))
    if found is not None and found[1].digest == digest:
        parsed = found[1]
        if found[0] != key:
            _CACHE.put(str(path), key, parsed)
        return IndexRead([_copy_entry(e) for e in parsed.entries], list(parsed.warnings), True)
    read = _parse_index(path, data)
    kept = [_copy_entry(e) for e in read.entries]
    _CACHE.put(str(path), key, _Parsed(digest, kept, list(read.warnings)))
    return read


def read_index_shared(paths: MemoryPaths) -> IndexRead:
    """index.yaml's entries as `read_index` gives them, from the cache after one stat when
    the file did not change (its size, mtime and inode). The entries may be the cache's own:
    treat them as read-only (the lists are the caller's)."""
    path = paths.index
    paths.ensure_inside_root(paths.chunks_dir)
    parsed = _CACHE.get(str(path), stat_key(path))
    if parsed is not None:
        return IndexRead(list(parsed.entries), list(parsed.warnings), exists=True)
    return read_index(paths)


HEAD_BLOCK = 256 * 1024


def _head_bytes(path: Path, n: int) -> bytes:
    """The start of index.yaml up to (not including) its (n+1)th entry, or the whole file;
    read in blocks, so a first page of a 40 MB index reads a few hundred KB."""
    data = b""
    with os.fdopen(open_no_symlink(path, os.O_RDONLY), "rb") as fh:
        while block := fh.read(HEAD_BLOCK):
            data += block
            end = head_end(data, n)
            if end is not None:
                return data[:end]
    return data


def read_index_head(paths: MemoryPaths, n: int) -> list[ChunkEntry] | None:
    """The first `n` entries alone, for a first page on screen while the rest is read; None
    when the whole index is cached already (read it instead) or is not in the writer's shape.
    Entries that would be skipped are left out silently: the full read reports them."""
    path = paths.index
    paths.ensure_inside_root(paths.chunks_dir)
    if _CACHE.get(str(path), stat_key(path)) is not None:
        return None
    try:
        data = _head_bytes(path, n)
    except OSError:
        return None
    return head_entries(data, path)


def count_index(paths: MemoryPaths) -> int:
    """How many entries `read_index` keeps (IndexCorruptError / StoreError as it): from the
    cache when the file did not change; else counted from its `- chunk_id:` lines (ids
    validated and deduplicated as the reader does) without building the entries; a file
    not in the writer's shape gets the full read."""
    path = paths.index
    paths.ensure_inside_root(paths.chunks_dir)
    parsed = _CACHE.get(str(path), stat_key(path))
    if parsed is not None:
        return len(parsed.entries)
    try:
        quick = count_entries(read_bytes_no_symlink(path))
    except OSError:
        quick = None
    if quick is not None:
        return quick
    return len(read_index_shared(paths).entries)


def _parse_index(path: Path, data: bytes) -> IndexRead:
    """The index's entries: scanned when the file is in the writer's shape (core.index.scan,
    ~5x faster), else through the strict loader, whose answer the scanner's always equals."""
    scanned = scan_index(data)
    if scanned is None:
        return _parse_index_strict(path, data)
    warnings: list[str] = []
    if scanned.version != INDEX_VERSION:
        warnings.append(f"{path}: version {scanned.version!r}, this program writes {INDEX_VERSION}")
    return collect_entries(scanned.entries, path, warnings)


def _parse_index_strict(path: Path, data: bytes) -> IndexRead:
    """The index through the strict YAML loader: the reference reading of any file."""
    try:
        doc = strict_load(data)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "unreadable"
        raise _index_error(path, f"not valid YAML{line} ({problem})") from exc
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "unreadable"
        raise _index_error(path, f"not valid YAML ({first})") from exc
    warnings: list[str] = []
    if doc is None:
        return IndexRead([], warnings, exists=True)
    if not isinstance(doc, dict):
        raise _index_error(path, f"not a mapping (a YAML {type(doc).__name__})")
    version = doc.get("version", INDEX_VERSION)
    if version != INDEX_VERSION:
        warnings.append(f"{path}: version {version!r}, this program writes {INDEX_VERSION}")
    raw_chunks = doc.get("chunks")
    if raw_chunks is None:
        return IndexRead([], warnings, exists=True)
    if not isinstance(raw_chunks, list):
        raise _index_error(path, f"`chunks` is not a list (a YAML {type(raw_chunks).__name__})")
    return collect_entries(raw_chunks, path, warnings)


__all__ = ["count_index", "read_index", "read_index_head", "read_index_shared"]
