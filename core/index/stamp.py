"""index.yaml's freshness stamp, and the entries a pass appended since one was taken.

A pass only ever appends to index.yaml (core.index.catalog.append_index_entry); anything else
writes it whole, under a new inode. So a reader that keeps where the file ended when it read
it (`IndexStamp`: the inode, that offset, and a digest of the TAIL_BYTES bytes before it) can
tell later whether the file only grew (the same inode, at least as long, those bytes still in
place) and then parse the new entries alone (`appended_since`). Both derived files beside the
index keep one: chunks/index.catalog on every line (with the file's mtime besides, for its
exact match) and chunks/recall.sqlite as its `index_end` meta value (`IndexStamp.text()`,
`ino:end:digest`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.index.format import ChunkEntry, entries_after
from core.store.atomic import read_regular

TAIL_BYTES = 64


def tail_digest(data: bytes) -> str:
    """The stamp's digest of the bytes that end at the stamped offset (the last TAIL_BYTES
    of `data`)."""
    return hashlib.blake2b(data[-TAIL_BYTES:], digest_size=12).hexdigest()


@dataclass(frozen=True)
class IndexStamp:
    """Where index.yaml ended when it was read: inode, offset, digest of the bytes before."""

    ino: int
    end: int
    tail: str

    def text(self) -> str:
        return f"{self.ino}:{self.end}:{self.tail}"

    @classmethod
    def parse(cls, text: str | None) -> IndexStamp | None:
        """The stamp `text()` wrote; None for anything else (then the file is read whole)."""
        if not text:
            return None
        try:
            ino, end, tail = text.split(":")
            return cls(int(ino), int(end), tail)
        except ValueError:
            return None


def stamp_at(ino: int, data: bytes, end: int, base: int = 0) -> IndexStamp:
    """The stamp of the file ending at `end`, `data` holding its bytes from offset `base`
    (at most max(0, end - TAIL_BYTES))."""
    return IndexStamp(ino, end, tail_digest(data[max(0, end - TAIL_BYTES) - base : end - base]))


def read_stamp(path: Path | str) -> IndexStamp | None:
    """The stamp of index.yaml as it is now (None: missing, unreadable, not a regular file)."""
    read = read_regular(path, tail=TAIL_BYTES)
    if read is None:
        return None
    st, data = read
    base = max(0, st.st_size - TAIL_BYTES)
    return stamp_at(st.st_ino, data, base + len(data), base)


@dataclass
class Appended:
    """What `appended_since` read: the new entries with their byte ranges in the file, and
    the file's bytes from `base` (enough to stamp it at any of their ends)."""

    entries: list[tuple[ChunkEntry, int, int]]
    ino: int
    mtime_ns: int
    data: bytes
    base: int

    @property
    def size(self) -> int:
        return self.base + len(self.data)

    def stamp(self, end: int | None = None) -> IndexStamp:
        """The stamp of the file ending at `end` (an entry's end), by default where it ends."""
        return stamp_at(self.ino, self.data, self.size if end is None else end, self.base)


def appended_since(
    path: Path | str, stamp: IndexStamp, known: Iterable[str] = ()
) -> Appended | None:
    """The entries after `stamp.end` when index.yaml only grew since it was stamped: the same
    inode, at least that long, the bytes before the stamp's end unchanged, and what follows in
    the writer's layout, holding only valid entries whose ids are new (not in `known`, not
    repeated). An empty list when nothing was appended. None for anything else (rewritten,
    truncated, unreadable, a tail written by hand): the caller reads the file whole."""
    base = max(0, stamp.end - TAIL_BYTES)
    read = read_regular(path, base)
    if read is None:
        return None
    st, data = read
    if st.st_ino != stamp.ino or base + len(data) < stamp.end:
        return None
    if tail_digest(data[: stamp.end - base]) != stamp.tail:
        return None
    found = entries_after(data, stamp.end - base, known, path)
    if found is None:
        return None
    shifted = [(entry, start + base, end + base) for entry, start, end in found]
    return Appended(shifted, st.st_ino, st.st_mtime_ns, data, base)


__all__ = [
    "TAIL_BYTES",
    "Appended",
    "IndexStamp",
    "appended_since",
    "read_stamp",
    "stamp_at",
    "tail_digest",
]
