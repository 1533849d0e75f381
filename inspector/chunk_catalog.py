"""index.yaml read fast enough for a 10,000-chunk session on screen (issue 14).

`core.chunks.read_index` builds every entry through the general YAML loader: ~2 s for 10k
chunks, all of it holding the GIL, so the Chunks tab (and the header's chunk count) waited
seconds and the UI thread stuttered meanwhile. The index is written by one emitter
(`core.chunks.render_index`), whose output is regular: `- chunk_id: …` at column 0, one
`key: scalar` per line at indent 2, multi-line text as `|` literal blocks, `cut_meta` a flat
mapping at indent 4. `read_chunk_index` scans that shape line by line and gives the same
`ChunkEntry` values `read_index` would. Anything the scanner does not fully recognise (a
quoted or folded scalar, a flow collection, an anchor, a tag, a duplicate key, a number it
cannot type exactly) makes it hand that one entry to the strict YAML loader, and a file whose
top level is not the emitter's shape, or an entry YAML refuses, goes whole to `read_index`, so
errors and warnings are core's own. Results are cached per file, keyed by size, mtime and
inode: a status poll with an unchanged index costs one stat.

    read_chunk_index(paths) -> IndexRead     # same contract as core.chunks.read_index
    read_chunk_index_head(paths, n) -> list[ChunkEntry] | None   # a first page, before the rest
    chunk_count(paths) -> int                # entries, via the cache (IndexCorruptError…)
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from core.atomic import open_no_symlink, read_bytes_no_symlink
from core.catalog import catalog_path, read_catalog
from core.chunks import INDEX_VERSION, ChunkEntry, IndexRead, collect_entries, read_index
from core.errors import SessionMemoryError
from core.paths import CHUNK_ID_MAX_LEN, CHUNK_ID_RE, MemoryPaths
from core.yaml_safe import strict_load

YIELD_EVERY = 50
"""Entries scanned between two GIL releases (a 10k index scan otherwise starves the UI)."""


class _Unusual(Exception):
    """The scanner met something it does not type exactly: let YAML read this entry."""


_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?$")
_INT = re.compile(r"0|-?[1-9][0-9]*")
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_.\-/ ]*")
_BLOCK = re.compile(r"\|([1-9])?([-+])?|\|([-+])([1-9])")
_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}


def _scalar(text: str) -> Any:
    """A one-line scalar as the YAML 1.1 safe loader types it, or _Unusual."""
    if text == "" or text == "null" or text == "~":
        return None
    if text[0] == "'":
        if len(text) < 2 or text[-1] != "'" or "'" in text[1:-1].replace("''", ""):
            raise _Unusual
        return text[1:-1].replace("''", "'")
    if _INT.fullmatch(text):
        return int(text)
    if (
        _PLAIN.fullmatch(text)
        and text[-1] != " "
        and " #" not in text
        and text.lower() not in _WORDS
        and not (text[0] == "." and text[1:].lower() in ("inf", "nan"))
    ):
        return text
    raise _Unusual


def _block(lines: list[str], i: int, header: str, indent: int) -> tuple[str, int]:
    """A literal block scalar starting after line i; (text, index of the next line)."""
    match = _BLOCK.fullmatch(header)
    if match is None:
        raise _Unusual
    digit = match.group(1) or match.group(4)
    chomp = match.group(2) or match.group(3) or ""
    # Without an indicator YAML detects the indentation; the emitter's is indent + 2.
    width = indent + 2 if digit is None else indent + int(digit)
    pad = " " * width
    body: list[str] = []
    j = i + 1
    while j < len(lines):
        line = lines[j]
        if line.startswith(pad):
            body.append(line[width:])
        elif line.strip(" ") == "":
            if len(line) > width:
                raise _Unusual
            body.append("")
        else:
            break
        j += 1
    if digit is None and body and body[0] == "" and any(b for b in body):
        # A leading empty line with auto-detection: leave it to YAML.
        first = next(b for b in body if b)
        if first.startswith(" "):
            raise _Unusual
    if digit is None and body and body[0].startswith(" "):
        raise _Unusual
    kept = len(body)
    while kept and body[kept - 1] == "":
        kept -= 1
    text = "\n".join(body[:kept])
    if chomp == "-":
        return text, j
    if chomp == "+":
        return text + "\n" * (len(body) - kept + 1) if kept else "\n" * len(body), j
    return (text + "\n" if kept else ""), j


def _entry(lines: list[str]) -> dict[str, Any]:
    """One `- chunk_id: …` entry in the emitter's shape, or _Unusual."""
    first = lines[0]
    if not first.startswith("- "):
        raise _Unusual
    lines = ["  " + first[2:], *lines[1:]]
    out: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip(" ") == "":
            i += 1
            continue
        if not line.startswith("  ") or line[2] == " ":
            raise _Unusual
        match = _KEY.fullmatch(line, 2)
        if match is None:
            raise _Unusual
        key, value = match.group(1), match.group(2) or ""
        if key in out:
            raise _Unusual
        if value.startswith("|"):
            out[key], i = _block(lines, i, value, 2)
            continue
        i += 1
        if value == "" and i < len(lines) and lines[i].startswith("    "):
            nested: dict[str, Any] = {}
            while i < len(lines) and lines[i].startswith("    "):
                sub = _KEY.fullmatch(lines[i], 4)
                if sub is None or lines[i][4] == " " or sub.group(1) in nested:
                    raise _Unusual
                nested[sub.group(1)] = _scalar(sub.group(2) or "")
                i += 1
            out[key] = nested
            continue
        out[key] = _scalar(value)
    return out


def _entry_yaml(lines: list[str]) -> Any:
    """One entry through the strict loader (yaml.YAMLError when it refuses it)."""
    doc = strict_load("\n".join(lines) + "\n")
    if not isinstance(doc, list) or len(doc) != 1:
        raise yaml.YAMLError("entry is not one list item")
    return doc[0]


def _scan(path: str, text: str) -> IndexRead | None:
    """The index in the emitter's shape, or None when its top level is anything else."""
    lines = text.split("\n")
    if len(lines) < 3 or lines[1] != "chunks:":
        return None
    head = _KEY.fullmatch(lines[0])
    if head is None or head.group(1) != "version" or not _INT.fullmatch(head.group(2) or ""):
        return None
    version = int(head.group(2) or "0")
    warnings: list[str] = []
    if version != INDEX_VERSION:
        warnings.append(f"{path}: version {version!r}, this program writes {INDEX_VERSION}")
    starts = [i for i in range(2, len(lines)) if lines[i][:1] not in ("", " ")]
    if not starts or starts[0] != 2:
        return None
    if any(not lines[i].startswith("- ") for i in starts):
        return None
    bounds = [*starts, len(lines)]

    def raws() -> Iterator[Any]:
        for n, (a, b) in enumerate(itertools.pairwise(bounds), 1):
            if n % YIELD_EVERY == 0:
                time.sleep(0)  # let the UI thread take the GIL: this runs in a worker thread
            segment = lines[a:b]
            try:
                yield _entry(segment)
            except _Unusual:
                yield _entry_yaml(segment)

    try:
        return collect_entries(raws(), path, warnings)
    except yaml.YAMLError:
        return None


_CACHE: dict[str, tuple[tuple[int, int, int], IndexRead]] = {}
_GUARD = threading.Lock()


def _copy(read: IndexRead) -> IndexRead:
    """Entries are shared with the cache; the lists are the caller's own."""
    return IndexRead(list(read.entries), list(read.warnings), exists=read.exists)


def read_chunk_index(paths: MemoryPaths, *, cache: bool = True) -> IndexRead:
    """index.yaml's entries, as `read_index` gives them, fast for the emitter's own output.
    Entries are shared with a cache: treat them as read-only. cache=False for a file read
    once (an archived session's, cached by its caller), so it never evicts the active one."""
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
    read: IndexRead | None = None
    try:
        data = read_bytes_no_symlink(path)
        if len(data) == st.st_size:
            read = _scan(str(path), data.decode("utf-8"))
    except (OSError, UnicodeDecodeError):
        read = None
    if read is None:
        read = read_index(paths)
    if cache:
        with _GUARD:
            if len(_CACHE) > 16:
                _CACHE.clear()
            _CACHE[str(path)] = (key, read)
    return _copy(read)


HEAD_BLOCK = 256 * 1024


def _head_text(path: Path, n: int) -> str:
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
                    return data[:at].decode("utf-8")
    return data.decode("utf-8")


def read_chunk_index_head(paths: MemoryPaths, n: int) -> list[ChunkEntry] | None:
    """The first `n` entries alone, for a first page on screen while the rest is read; None
    when the whole index is cached already (read it instead) or is not in the emitter's shape.
    Entries that would be skipped are left out silently: the full read reports them."""
    path = paths.index
    paths.ensure_inside_root(paths.chunks_dir)
    try:
        st = os.stat(path, follow_symlinks=False)
        with _GUARD:
            cached = _CACHE.get(str(path))
        if cached is not None and cached[0] == (st.st_size, st.st_mtime_ns, st.st_ino):
            return None
        text = _head_text(path, n)
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.split("\n")
    if len(lines) < 3 or lines[1] != "chunks:" or not lines[0].startswith("version:"):
        return None
    starts: list[int] = []
    for i in range(2, len(lines)):
        if lines[i][:1] not in ("", " "):
            if not lines[i].startswith("- "):
                return None
            starts.append(i)
    starts.append(len(lines))
    out: list[ChunkEntry] = []
    seen: set[str] = set()
    for a, b in itertools.pairwise(starts):
        try:
            try:
                raw: Any = _entry(lines[a:b])
            except _Unusual:
                raw = _entry_yaml(lines[a:b])
            entry = ChunkEntry.from_dict(raw, str(path))
        except (yaml.YAMLError, SessionMemoryError):
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
            value = _scalar(raw.decode("utf-8"))
            valid = isinstance(value, str) and len(value) <= CHUNK_ID_MAX_LEN
            if valid and CHUNK_ID_RE.fullmatch(value):
                seen.add(value)
    except (_Unusual, UnicodeDecodeError):
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
