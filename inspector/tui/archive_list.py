"""The closed sessions under `M/session_archive/`, listed cheaply enough for 100 of them (issue 14).

`MemoryManager.list_archives` reads every archive on each call: with 100 of them the Archive
tab would pay that on every refresh. Here each archived session is read
once and cached, keyed by the stats (size, mtime, inode) of its folder and of the files the
row shows; an unchanged archive costs a few stats. The row's figures are core's
(`core.status.archive_info`, what `status` lists); the first request is read from the first
FIRST_REQUEST_BYTES of events.jsonl.

    list_archives_light(manager) -> list[ArchiveLight]   # sorted by folder name
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import SessionMemoryError
from core.status import ArchiveInfo, archive_info
from core.store.atomic import open_no_symlink
from core.store.stat_cache import StatCache, stat_key
from inspector.safe_text import one_line

if TYPE_CHECKING:
    from core.manager import MemoryManager

FIRST_REQUEST_BYTES = 256 * 1024
COUNT_BLOCK = 1 << 20


@dataclass(frozen=True)
class ArchiveLight:
    """One archived session's row: core's ArchiveInfo plus its first request."""

    info: ArchiveInfo
    first_request: str


def first_request(session_dir: Path) -> str:
    """The first user_input of an archived session's events.jsonl ("" when none is near the
    start); only the first FIRST_REQUEST_BYTES are read."""
    try:
        with os.fdopen(open_no_symlink(session_dir / "events.jsonl", os.O_RDONLY), "rb") as fh:
            head = fh.read(FIRST_REQUEST_BYTES)
    except OSError:
        return ""
    for raw in head.split(b"\n"):
        try:
            event = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict) and event.get("type") == "user_input":
            content = event.get("content")
            return one_line(content if isinstance(content, str) else str(content), 200)
    return ""


_CACHE: StatCache[ArchiveLight] = StatCache(4096)


def _read_one(memory_dir: Path, child: Path) -> ArchiveLight:
    return ArchiveLight(archive_info(memory_dir, child), first_request(child))


def list_archives_light(manager: MemoryManager) -> list[ArchiveLight]:
    """Every archived session's row, from the cache when its files did not change."""
    out: list[ArchiveLight] = []
    for child in manager.paths.archived_sessions():
        key = tuple(
            stat_key(p)
            for p in (
                child,
                child / "events.jsonl",
                child / "state.json",
                child / "chunks",
                child / "chunks" / "index.yaml",
                child / "chunks" / "pending",
            )
        )
        cached = _CACHE.get(str(child), key)
        if cached is not None:
            out.append(cached)
            continue
        try:
            light = _read_one(manager.memory_dir, child)
        except (SessionMemoryError, OSError):
            continue
        _CACHE.put(str(child), key, light)
        out.append(light)
    return out


__all__ = ["ArchiveLight", "first_request", "list_archives_light"]
