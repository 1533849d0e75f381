"""What a process read from a file, kept while the file's key says it did not change.

One idiom behind every such cache (index.yaml's parse, the index catalog, the Archive tab's
rows): a bounded, thread-safe map from a name (a path) to the key the value was read under and
the value. The key is usually the files' stats (`stat_key`: inode, size, mtime), sometimes a
digest of the bytes; a lookup with another key misses. Past `limit` names the map is cleared
whole (a few files are live at once; clearing keeps the bound without bookkeeping).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable
from pathlib import Path
from typing import Generic, TypeVar

V = TypeVar("V")

StatKey = tuple[int, int, int]


def stat_key(path: Path | str) -> StatKey | None:
    """The file's inode, size and mtime in nanoseconds (a symbolic link is not followed);
    None when it cannot be stat'ed."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class StatCache(Generic[V]):
    """name -> (key, value); `get` answers only under the key the value was put with."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._items: dict[str, tuple[Hashable, V]] = {}
        self._guard = threading.Lock()

    def get(self, name: str, key: Hashable) -> V | None:
        """The value kept for `name` under `key` (None: none, or kept under another key)."""
        if key is None:
            return None
        with self._guard:
            found = self._items.get(name)
        return found[1] if found is not None and found[0] == key else None

    def peek(self, name: str) -> tuple[Hashable, V] | None:
        """The key and value kept for `name`, whatever the key."""
        with self._guard:
            return self._items.get(name)

    def put(self, name: str, key: Hashable, value: V) -> None:
        """Keep `value` for `name` under `key` (a None key keeps nothing)."""
        if key is None:
            return
        with self._guard:
            if name not in self._items and len(self._items) > self._limit:
                self._items.clear()
            self._items[name] = (key, value)

    def clear(self) -> None:
        with self._guard:
            self._items.clear()


__all__ = ["StatCache", "StatKey", "stat_key"]
