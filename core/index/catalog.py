"""chunks/index.catalog: a derived, self-validating table of index.yaml's light fields.

index.yaml stays the one source of truth (contract §6). At 10,000 chunks it is a 10–20 MB
YAML file whose full parse takes seconds, so the commands that need little of it (`status`:
the count; a pass: the ids, the last few summaries; `prompt`: whether there is history) read
this catalog instead: one JSON line per entry with its light fields, where its YAML text lies
in index.yaml (`start`, `end`) and what it adds to the Rolling Summary (core.compaction.summaries
FoldStat). A summary is read by parsing that entry's bytes alone.

Trust: every entry line records index.yaml's inode, size, mtime_ns and a digest of its last
bytes *as they were once that entry was in the file*. A reader accepts the newest line that
matches the file now; if index.yaml has grown since (a pass appended entries) only the new
tail is parsed and appended to the catalog; if it was truncated (a torn append repaired) the
catalog is used up to the last line that still matches. Anything else — another inode (a
whole rewrite), no matching line, an unreadable catalog, a tail not in the writer's layout —
rebuilds the catalog from a full parse. A catalog is never needed: deleting it costs one
rebuild. A file the writer could not have produced (hand-edited, entries skipped with
warnings) is answered from the full parse and gets no catalog. The stamp a line carries and the
catch-up after an append are core.index.stamp's (recall.sqlite keeps the same stamp).

Every write of index.yaml is here, so the catalog never lags a write of this process: whole
(`write_index`, the catalog written from the same entries), one entry appended in place
(`append_index_entry`), a torn append cut back (`truncate_torn_append`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import yaml

from core.compaction.summaries import FoldStat, fold_stat, render_summary_md_window
from core.errors import IndexCorruptError, SessionMemoryError, StoreError
from core.index.chunk_files import make_dir
from core.index.format import (
    INDEX_HEAD,
    ChunkEntry,
    IndexRead,
    ends_closed,
    entries_after,
    index_text,
    next_chunk_id,
    render_index,
    text_digest,
)
from core.index.reader import count_index, read_index
from core.index.stamp import (
    TAIL_BYTES,
    Appended,
    IndexStamp,
    appended_since,
    stamp_at,
    tail_digest,
)
from core.store.atomic import (
    atomic_write_bytes,
    open_no_symlink,
    read_bytes_no_symlink,
    read_tail,
    write_all,
)
from core.store.faults import fault_point, fault_wanted
from core.store.paths import MemoryPaths
from core.store.stat_cache import StatCache, StatKey, stat_key
from core.yaml_safe import strict_load

CATALOG_NAME = "index.catalog"


def catalog_path(paths: MemoryPaths) -> Path:
    return paths.chunks_dir / CATALOG_NAME


def _key(text: str | None) -> str | None:
    """A short digest of a request (FoldStat.last_request), so a line stays small."""
    if text is None:
        return None
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


@dataclass
class CatalogEntry:
    """The light fields of one index entry and where its YAML text lies in index.yaml."""

    chunk_id: str
    created_at: str
    event_count: int
    first_event_id: str | None
    last_event_id: str | None
    cut_meta: dict[str, Any] | None
    extra: dict[str, Any]
    start: int
    end: int
    fold_lines: int
    fold_merges_first: bool
    fold_key: str | None
    folded_total: int
    """Rolling Summary lines folded from this entry and every one before it."""


class CatalogEntries(Sequence[CatalogEntry]):
    """The catalog's entries, each line parsed only when it is asked for: `status` needs the
    count and the ids, a pass a few entries at the end (10,000 lines parse in ~250 ms)."""

    def __init__(self, items: Iterable[bytes | CatalogEntry] = (), ids: list[str] | None = None):
        self._items: list[bytes | CatalogEntry] = list(items)
        self._ids = ids
        """Ids of the first len(_ids) entries, read from the catalog's bytes at once."""

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> CatalogEntry: ...
    @overload
    def __getitem__(self, i: slice) -> list[CatalogEntry]: ...
    def __getitem__(self, i: int | slice) -> CatalogEntry | list[CatalogEntry]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self._items)))]
        item = self._items[i]
        if isinstance(item, CatalogEntry):
            return item
        parsed = _parse_line(item)
        if parsed is None:
            raise StoreError(
                f"a line of {CATALOG_NAME} is damaged; run `session-inspector repair` "
                "(or delete the file: it is rebuilt)"
            )
        self._items[i] = parsed[0]
        return parsed[0]

    def append(self, entry: CatalogEntry) -> None:
        self._items.append(entry)
        if self._ids is not None and len(self._ids) == len(self._items) - 1:
            self._ids.append(entry.chunk_id)

    def ids(self) -> list[str]:
        known = self._ids[: len(self._items)] if self._ids is not None else []
        if len(known) < len(self._items):
            known = known + [self.chunk_id(i) for i in range(len(known), len(self._items))]
            self._ids = known
        return list(known)

    def copy(self) -> CatalogEntries:
        return CatalogEntries(self._items, list(self._ids) if self._ids is not None else None)

    def chunk_id(self, i: int) -> str:
        """Entry i's id, read from its line without parsing it."""
        item = self._items[i]
        if isinstance(item, CatalogEntry):
            return item.chunk_id
        if item.startswith(_ID_PREFIX):
            end = item.find(b'"', len(_ID_PREFIX))
            if end > 0:
                return item[len(_ID_PREFIX) : end].decode("ascii", "replace")
        return self[i].chunk_id


_ID_PREFIX = b'{"id": "'


@dataclass
class Catalog:
    """index.yaml's entries, light; `summary(i)` reads one entry's summary on demand."""

    paths: MemoryPaths
    entries: CatalogEntries
    warnings: list[str] = field(default_factory=list)
    exists: bool = False
    appendable: bool = False
    """index.yaml is in the writer's layout: a pass may append to it."""
    size: int = 0
    rebuilt: bool = False
    _full: list[ChunkEntry] | None = None
    _summaries: dict[int, str] = field(default_factory=dict)
    _highest: tuple[int, str] | None = None
    """(entries scanned, the next chunk id after them)."""

    def __len__(self) -> int:
        return len(self.entries)

    def chunk_ids(self) -> list[str]:
        return self.entries.ids()

    def next_chunk_id(self) -> str:
        """`chunk_NNNN` after the highest `chunk_NNNN` in the index
        (core.index.format.next_chunk_id; the highest number is kept, so a live process pays
        for the scan once)."""
        ids = self.entries.ids()
        if self._highest is None or self._highest[0] > len(ids):
            self._highest = (0, "chunk_0001")
        seen, _ = self._highest
        if seen < len(ids):
            after = next_chunk_id(ids[seen:])
            current = self._highest[1]
            best = max(int(after[6:]), int(current[6:]))
            self._highest = (len(ids), f"chunk_{best:04d}")
        return self._highest[1]

    def copy(self) -> Catalog:
        """Another view of the same entries (the cached catalog is shared by threads)."""
        return Catalog(
            self.paths,
            self.entries.copy(),
            warnings=list(self.warnings),
            exists=self.exists,
            appendable=self.appendable,
            size=self.size,
            rebuilt=self.rebuilt,
            _full=self._full,
            _summaries=dict(self._summaries),
            _highest=self._highest,
        )

    def summary(self, i: int) -> str:
        """The summary of entry i (0-based; negative counts from the end)."""
        if i < 0:
            i += len(self.entries)
        if self._full is not None:
            return self._full[i].summary
        cached = self._summaries.get(i)
        if cached is None:
            cached = read_entry(self.paths, self.entries[i]).summary
            self._summaries[i] = cached
        return cached

    def chunk_entry(self, i: int) -> ChunkEntry:
        """Entry i as read_index gives it (parses that entry's text alone)."""
        if self._full is not None:
            return self._full[i]
        return read_entry(self.paths, self.entries[i])

    def entry_extra(self, chunk_id: str, *, recent: int = 64) -> dict[str, Any] | None:
        """The extra fields of chunk `chunk_id`'s entry, searched among the `recent` newest
        (a continued turn's chunks are recent); None when it is not there."""
        for i in range(len(self.entries) - 1, max(-1, len(self.entries) - 1 - recent), -1):
            if self.entries[i].chunk_id == chunk_id:
                extra = self.chunk_entry(i).extra
                return extra if isinstance(extra, dict) else None
        return None

    def folded_before(self, n: int) -> int:
        """Rolling Summary lines folded from the first n entries."""
        return self.entries[n - 1].folded_total if n > 0 else 0

    def summary_md(
        self,
        *,
        summary_max_chunks: int,
        max_rolling_summary_lines: int,
        max_summary_tokens: int | None,
        extra: tuple[ChunkEntry, FoldStat] | None = None,
    ) -> str:
        """summary.md for these entries (plus `extra`, an entry about to be added), reading
        only the summaries it shows (core.compaction.summaries.render_summary_md_window)."""
        count = len(self.entries) + (1 if extra else 0)

        def chunk_at(i: int) -> tuple[str, str]:
            if extra is not None and i == len(self.entries):
                return extra[0].chunk_id, extra[0].summary
            return self.entries[i].chunk_id, self.summary(i)

        def lines_of(i: int) -> int:
            if extra is not None and i == len(self.entries):
                return extra[1].lines
            return self.entries[i].fold_lines

        files: object = None
        if extra is not None:
            files = extra[0].extra.get("files")
        elif self.entries:
            files = self.entries[-1].extra.get("files")
        split = max(0, count - summary_max_chunks)
        total = self.folded_before(min(split, len(self.entries)))
        if extra is not None and split > len(self.entries):
            total += extra[1].lines
        return render_summary_md_window(
            count,
            chunk_at,
            lines_of,
            total,
            summary_max_chunks=summary_max_chunks,
            max_rolling_summary_lines=max_rolling_summary_lines,
            max_summary_tokens=max_summary_tokens,
            files=files,
        )

    def next_fold(self, entry: ChunkEntry) -> FoldStat:
        """The FoldStat of `entry` appended after these entries."""
        previous: str | None = None
        if self.entries:
            last = len(self.entries) - 1
            previous = fold_stat(self.entries[last].chunk_id, self.summary(last), None).last_request
        return fold_stat(entry.chunk_id, entry.summary, previous)


def read_entry(paths: MemoryPaths, entry: CatalogEntry) -> ChunkEntry:
    """Parse one entry's YAML text out of index.yaml."""
    try:
        fd = open_no_symlink(paths.index, os.O_RDONLY)
    except OSError as exc:
        raise StoreError(f"cannot read {paths.index}: {exc.strerror or exc}") from exc
    try:
        data = os.pread(fd, entry.end - entry.start, entry.start)
    finally:
        os.close(fd)
    try:
        doc = strict_load(data)
    except yaml.YAMLError as exc:
        raise IndexCorruptError(
            f"{paths.index}: entry {entry.chunk_id!r} changed under the catalog; "
            "run `session-inspector repair`"
        ) from exc
    if not isinstance(doc, list) or len(doc) != 1:
        raise IndexCorruptError(
            f"{paths.index}: entry {entry.chunk_id!r} changed under the catalog; "
            "run `session-inspector repair`"
        )
    found = ChunkEntry.from_dict(doc[0], f"{paths.index}")
    if found.chunk_id != entry.chunk_id:
        raise IndexCorruptError(
            f"{paths.index}: entry {entry.chunk_id!r} changed under the catalog; "
            "run `session-inspector repair`"
        )
    return found


def read_summary(paths: MemoryPaths, chunk_id: str) -> str | None:
    """The summary of one chunk (None when it is not in the index)."""
    catalog = read_catalog(paths)
    for i in range(len(catalog.entries) - 1, -1, -1):
        if catalog.entries.chunk_id(i) == chunk_id:
            return catalog.summary(i)
    return None


# --------------------------------------------------------------------------- lines


def _line(e: CatalogEntry, ino: int, size: int, mtime_ns: int, tail: str) -> bytes:
    obj = {
        "id": e.chunk_id,
        "at": e.created_at,
        "n": e.event_count,
        "first": e.first_event_id,
        "last": e.last_event_id,
        "cut": e.cut_meta,
        "x": e.extra,
        "s": e.start,
        "e": e.end,
        "fl": e.fold_lines,
        "fm": e.fold_merges_first,
        "fk": e.fold_key,
        "ft": e.folded_total,
        "ino": ino,
        "size": size,
        "mt": mtime_ns,
        "tail": tail,
    }
    return (json.dumps(obj, ensure_ascii=False, default=str) + "\n").encode("utf-8")


def _from_line(obj: Any) -> tuple[CatalogEntry, tuple[int, int, int, str]] | None:
    if not isinstance(obj, dict):
        return None
    try:
        entry = CatalogEntry(
            chunk_id=str(obj["id"]),
            created_at=str(obj["at"]),
            event_count=int(obj["n"]),
            first_event_id=obj["first"],
            last_event_id=obj["last"],
            cut_meta=obj["cut"],
            extra=dict(obj["x"]),
            start=int(obj["s"]),
            end=int(obj["e"]),
            fold_lines=int(obj["fl"]),
            fold_merges_first=bool(obj["fm"]),
            fold_key=obj["fk"],
            folded_total=int(obj["ft"]),
        )
        stamp = (int(obj["ino"]), int(obj["size"]), int(obj["mt"]), str(obj["tail"]))
    except (KeyError, TypeError, ValueError):
        return None
    return entry, stamp


def _parse_line(raw: bytes) -> tuple[CatalogEntry, tuple[int, int, int, str]] | None:
    try:
        return _from_line(json.loads(raw))
    except (ValueError, RecursionError):
        return None


def _load_raw(path: Path) -> tuple[list[bytes], list[str] | None, bool]:
    """The catalog's lines up to the first that is not a whole line of the expected shape
    (a torn last line, garbage) or does not begin where the line before it ended in
    index.yaml (a lost line: the entries after it would be trusted without the one it held),
    each parsed only when needed; their ids (read without parsing: this runs for every
    command); and whether every whole line was kept.

    A line's span is read after its last `, "s": `: only fields of a fixed form (numbers,
    hex digests) follow the entry's own, and no JSON string can hold an unescaped quote, so
    a field of `x` or `cut` named `s` comes before it. Spans are compared as text (json
    writes no leading zeros)."""
    try:
        data = read_bytes_no_symlink(path)
    except OSError:
        return [], None, True
    lines = data.split(b"\n")
    lines.pop()  # what follows the last newline: "" or a torn line
    ids: list[str] = []
    skip = len(_ID_PREFIX)
    expect = str(len(INDEX_HEAD)).encode()
    for k, raw in enumerate(lines):
        end = raw.find(b'"', skip)
        if not (raw.startswith(_ID_PREFIX) and raw.endswith(b"}")) or end < 0:
            return lines[:k], ids, False
        at = raw.rfind(b', "s": ') + 7
        mid = raw.find(b', "e": ', at)
        stop = raw.find(b",", mid + 7)
        if at < 7 or mid < 0 or stop < 0 or raw[at:mid] != expect:
            return lines[:k], ids, False
        expect = raw[mid + 7 : stop]
        ids.append(raw[skip:end].decode("ascii", "replace"))
    return lines, ids, True


def _last_line(path: Path) -> tuple[CatalogEntry, tuple[int, int, int, str]] | None:
    """The catalog's last whole line, parsed (None: empty, torn or unreadable)."""
    try:
        tail = read_tail(path, 1 << 16)
    except OSError:
        return None
    if tail is None:
        return None
    chunk = tail[0]
    if not chunk.endswith(b"\n"):
        return None
    return _parse_line(chunk[:-1].rsplit(b"\n", 1)[-1])


# --------------------------------------------------------------------------- reading


def _light(entry: ChunkEntry, start: int, end: int, stat: FoldStat, total: int) -> CatalogEntry:
    return CatalogEntry(
        chunk_id=entry.chunk_id,
        created_at=entry.created_at,
        event_count=entry.event_count,
        first_event_id=entry.first_event_id,
        last_event_id=entry.last_event_id,
        cut_meta=entry.cut_meta,
        extra=json.loads(json.dumps(entry.extra, ensure_ascii=False, default=str)),
        start=start,
        end=end,
        fold_lines=stat.lines,
        fold_merges_first=stat.merges_first,
        fold_key=_key(stat.last_request),
        folded_total=total,
    )


def _read_index_bytes(path: Path) -> bytes:
    """index.yaml whole; StoreError naming it (never a bare OSError: a FIFO, a link)."""
    try:
        return read_bytes_no_symlink(path)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _pread(path: Path, start: int, end: int) -> bytes:
    try:
        fd = open_no_symlink(path, os.O_RDONLY)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return os.pread(fd, max(0, end - start), start)
    finally:
        os.close(fd)


_CACHE: StatCache[Catalog] = StatCache(32)


def _files_key(paths: MemoryPaths) -> tuple[StatKey, StatKey] | None:
    """index.yaml's and the catalog's inode, size and mtime: a process reuses what it read
    while neither changed (a live agent's passes and prompts read it once)."""
    index = stat_key(paths.index)
    if index is None:
        return None
    return (index, stat_key(catalog_path(paths)) or (0, 0, 0))


def _remember(paths: MemoryPaths, catalog: Catalog) -> Catalog:
    key = _files_key(paths)
    if key is not None and catalog.appendable and catalog.size == key[0][1]:
        _CACHE.put(str(paths.index), key, catalog.copy())
    return catalog


def read_catalog(paths: MemoryPaths, *, write: bool = True) -> Catalog:
    """index.yaml's entries through the catalog (see the module docstring); IndexCorruptError
    exactly when `read_index` would raise it. `write=False` never touches the catalog file
    (an archived session is read-only)."""
    paths.ensure_inside_root(paths.chunks_dir)
    cached = _CACHE.get(str(paths.index), _files_key(paths))
    if cached is not None:
        return cached.copy()
    return _remember(paths, _read_catalog(paths, write=write))


def _read_catalog(paths: MemoryPaths, *, write: bool) -> Catalog:
    path = paths.index
    st = _stat(path)
    if st is None:
        return Catalog(paths, CatalogEntries(), exists=False)
    lines, ids, whole = _load_raw(catalog_path(paths))
    # The newest line that matches the file as it is now (or as it was before an append).
    for k in range(len(lines) - 1, -1, -1):
        parsed = _parse_line(lines[k])
        if parsed is None:
            continue
        entry, (ino, size, mtime_ns, tail) = parsed
        exact = entry.end == st.st_size == size and mtime_ns == st.st_mtime_ns
        # A copy that kept the mtime (cp -a, a backup restored) is the same file under another
        # inode; growing or shrinking is trusted only in the same file.
        if (ino != st.st_ino and not exact) or entry.end > st.st_size:
            continue
        tail_bytes = _pread(path, max(0, entry.end - TAIL_BYTES), entry.end)
        if tail_digest(tail_bytes) != tail:
            continue
        kept = CatalogEntries([*lines[:k], entry], ids)
        newest = k == len(lines) - 1 and whole  # else lines after it are dropped or damaged
        if exact:
            if not newest and write:
                _rewrite(paths, kept, st.st_ino, st.st_mtime_ns)
            appendable = not ends_closed(tail_bytes)
            return Catalog(paths, kept, exists=True, appendable=appendable, size=st.st_size)
        if entry.end == st.st_size and k == len(lines) - 1:
            break  # the same size, another mtime: rewritten in place, not appended to
        known = {kept.chunk_id(i) for i in range(len(kept))}
        appended = appended_since(path, IndexStamp(ino, entry.end, tail), known)
        if appended is None:
            break
        catalog = Catalog(paths, CatalogEntries(kept._items, ids), exists=True, appendable=True)
        catalog.size = appended.size
        _extend(catalog, appended.entries)
        if write:
            if newest:
                _append_lines(paths, catalog.entries[len(kept) :], appended)
            else:
                _rewrite(
                    paths,
                    catalog.entries,
                    appended.ino,
                    appended.mtime_ns,
                    appended.data,
                    appended.base,
                )
        return catalog
    return rebuild_catalog(paths, write=write)


def _extend(catalog: Catalog, new: list[tuple[ChunkEntry, int, int]]) -> None:
    previous: str | None = None
    if catalog.entries and new:
        previous = fold_stat(catalog.entries[-1].chunk_id, catalog.summary(-1), None).last_request
    total = catalog.folded_before(len(catalog.entries))
    for entry, start, end in new:
        stat = fold_stat(entry.chunk_id, entry.summary, previous)
        previous = stat.last_request
        total += stat.lines
        catalog.entries.append(_light(entry, start, end, stat, total))


def rebuild_catalog(paths: MemoryPaths, *, write: bool = True) -> Catalog:
    """Parse index.yaml whole and write the catalog afresh (when the file is in the writer's
    layout); IndexCorruptError as read_index."""
    path = paths.index
    st = _stat(path)
    if st is None:
        return Catalog(paths, CatalogEntries(), exists=False)
    data = _read_index_bytes(path)
    full: IndexRead = read_index(paths)
    tail = entries_after(data, len(INDEX_HEAD), (), path) if data.startswith(INDEX_HEAD) else None
    if tail is None or full.warnings or len(tail) != len(full.entries):
        catalog = Catalog(
            paths, CatalogEntries(), warnings=list(full.warnings), exists=True, rebuilt=True
        )
        catalog._full = full.entries
        _extend(catalog, [(e, 0, 0) for e in full.entries])
        if write:
            with contextlib.suppress(OSError, SessionMemoryError):
                catalog_path(paths).unlink()
        return catalog
    catalog = Catalog(
        paths, CatalogEntries(), exists=True, appendable=True, size=len(data), rebuilt=True
    )
    _extend(catalog, tail)
    if write:
        st = os.stat(path, follow_symlinks=False)
        _rewrite(paths, catalog.entries, st.st_ino, st.st_mtime_ns, data)
    return catalog


# --------------------------------------------------------------------------- writing


def _stamps(
    entries: Sequence[CatalogEntry],
    ino: int,
    mtime_ns: int,
    path: Path,
    data: bytes | None = None,
    base: int = 0,
) -> bytes:
    """Lines for `entries`; every line is stamped as if the file ended at that entry
    (core.index.stamp; only the last one with the file's real mtime: earlier ones match only
    after a truncation). `data`: the file's bytes from offset `base`, else each is read."""
    out: list[bytes] = []
    for i, e in enumerate(entries):
        if data is not None and max(0, e.end - TAIL_BYTES) >= base:
            tail = stamp_at(ino, data, e.end, base).tail
        else:
            tail = tail_digest(_pread(path, max(0, e.end - TAIL_BYTES), e.end))
        last = i == len(entries) - 1
        out.append(_line(e, ino, e.end, mtime_ns if last else 0, tail))
    return b"".join(out)


def _rewrite(
    paths: MemoryPaths,
    entries: Sequence[CatalogEntry],
    ino: int,
    mtime_ns: int,
    data: bytes | None = None,
    base: int = 0,
) -> None:
    """Write the whole catalog (a derived file: no folder fsync, a failure only costs a
    rebuild later)."""
    with contextlib.suppress(OSError, SessionMemoryError):
        atomic_write_bytes(
            catalog_path(paths),
            _stamps(entries, ino, mtime_ns, paths.index, data, base),
            sync_folder=False,
        )


def _append_lines(paths: MemoryPaths, new: list[CatalogEntry], appended: Appended) -> None:
    """Append lines for entries just added; under an flock, and only when the catalog is
    still the size this process read (another reader may have caught up already)."""
    if not new:
        return
    blob = _stamps(new, appended.ino, appended.mtime_ns, paths.index, appended.data, appended.base)
    _append_catalog(catalog_path(paths), blob, new[0].start)


def _append_catalog(target: Path, blob: bytes, start: int) -> None:
    """Append `blob` (lines for entries starting at `start` in index.yaml) to the catalog,
    under its flock, only when its last line ends where they begin; a catalog that cannot be
    appended to is left for the next reader to rebuild."""
    try:
        fd = open_no_symlink(target, os.O_WRONLY | os.O_APPEND)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        last = _last_line(target)
        if last is not None and last[0].end == start:
            os.write(fd, blob)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_index_entry(paths: MemoryPaths, catalog: Catalog, entry: ChunkEntry) -> tuple[int, int]:
    """Append one entry to index.yaml in place, fsynced, and to the catalog; returns the
    (offset, length) of the text written. The caller holds the session lock, and has
    checked `catalog.appendable` against the file as it is now."""
    text = render_index([entry]).encode("utf-8")
    if not text.startswith(INDEX_HEAD):
        raise StoreError(f"cannot write {paths.index}: unexpected entry layout")
    body = text[len(INDEX_HEAD) :]
    offset = catalog.size
    try:
        fd = open_no_symlink(paths.index, os.O_WRONLY | os.O_APPEND)
    except OSError as exc:
        raise StoreError(f"cannot write {paths.index}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if st.st_size != offset:
            raise StoreError(f"{paths.index} changed during the pass; try again")
        if fault_wanted("during_index_append"):
            write_all(fd, body[: len(body) // 2])  # a torn append, for the crash tests
            os.fsync(fd)
            fault_point("during_index_append")
        write_all(fd, body)
        os.fsync(fd)
        st = os.fstat(fd)
    except OSError as exc:
        raise StoreError(f"cannot write {paths.index}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    fault_point("after_index_append")
    stat = catalog.next_fold(entry)
    end = offset + len(body)
    total = catalog.folded_before(len(catalog.entries)) + stat.lines
    light = _light(entry, offset, end, stat, total)
    catalog._summaries[len(catalog.entries)] = entry.summary
    had = bool(catalog.entries)
    catalog.entries.append(light)
    catalog.size = end
    # The stamp digests the file's last TAIL_BYTES: the body just written, when it is as long.
    ending = body if len(body) >= TAIL_BYTES else _pread(paths.index, max(0, end - TAIL_BYTES), end)
    line = _line(light, st.st_ino, end, st.st_mtime_ns, tail_digest(ending))
    if had:
        _append_catalog(catalog_path(paths), line, offset)
    else:
        _rewrite(paths, catalog.entries, st.st_ino, st.st_mtime_ns)
    _remember(paths, catalog)
    return offset, len(body)


def write_index(paths: MemoryPaths, entries: Sequence[ChunkEntry]) -> None:
    """Atomically write index.yaml whole (caller holds the session lock), and its catalog
    from the same entries, so the next reader needs no full parse.

    The text is `version`/`chunks:` and each entry rendered alone, one after the other:
    byte for byte what `render_index(entries)` gives, and what a pass appends to."""
    data, bodies = index_text(entries)
    make_dir(paths, paths.chunks_dir)
    atomic_write_bytes(paths.index, data)
    if entries:
        _write_catalog_for(paths, list(entries), bodies, data)


def chunk_count(paths: MemoryPaths) -> int:
    """How many chunks the index holds (IndexCorruptError / StoreError as read_index),
    without building its entries: from chunks/index.catalog when a pass left one (~20 ms
    cold at 10k chunks; never written from here), else core.index.reader.count_index."""
    paths.ensure_inside_root(paths.chunks_dir)
    if catalog_path(paths).is_file():
        return len(read_catalog(paths, write=False))
    return count_index(paths)


def _write_catalog_for(
    paths: MemoryPaths, entries: list[ChunkEntry], bodies: list[bytes], data: bytes
) -> None:
    """The catalog of an index.yaml just written whole from `entries` (`bodies`: each
    entry's text, `data`: the file), without parsing it back."""
    try:
        st = os.stat(paths.index, follow_symlinks=False)
    except OSError:
        return
    if st.st_size != len(data):
        return
    catalog = Catalog(paths, CatalogEntries(), exists=True, appendable=True, size=len(data))
    offset = len(INDEX_HEAD)
    spans: list[tuple[ChunkEntry, int, int]] = []
    for entry, body in zip(entries, bodies, strict=True):
        spans.append((entry, offset, offset + len(body)))
        offset += len(body)
    _extend(catalog, spans)
    _rewrite(paths, catalog.entries, st.st_ino, st.st_mtime_ns, data)


def truncate_torn_append(paths: MemoryPaths, offset: int, length: int, digest: str) -> bool:
    """Undo an append of `length` bytes at `offset` that did not complete (a crash during the
    write): when index.yaml does not hold exactly those bytes there, cut it back to `offset`.
    Returns whether it truncated. The caller holds the session lock."""
    st = _stat(paths.index)
    if st is None or st.st_size <= offset:
        return False
    written = _pread(paths.index, offset, offset + length)
    if st.st_size == offset + length and text_digest(written) == digest:
        return False
    try:
        fd = open_no_symlink(paths.index, os.O_WRONLY)
    except OSError as exc:
        raise StoreError(f"cannot repair {paths.index}: {exc.strerror or exc}") from exc
    try:
        os.ftruncate(fd, offset)
        os.fsync(fd)
    except OSError as exc:
        raise StoreError(f"cannot repair {paths.index}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    return True


__all__ = [
    "CATALOG_NAME",
    "Catalog",
    "CatalogEntry",
    "append_index_entry",
    "catalog_path",
    "chunk_count",
    "read_catalog",
    "read_entry",
    "read_summary",
    "rebuild_catalog",
    "truncate_torn_append",
    "write_index",
]
