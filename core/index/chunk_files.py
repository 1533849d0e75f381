"""Chunk files, `chunks/<chunk_id>.jsonl` (contract §6): written, read, listed.

Every file name here comes from an id checked by `validate_chunk_id`, so nothing read from
index.yaml or a directory listing can open a file outside `chunks/`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from core.errors import BadInputError, StoreError
from core.events import Event
from core.jsonl import CorruptLine, parse_event_lines, stored_events_bytes
from core.store.atomic import atomic_write_bytes, fsync_dir, os_reason, read_bytes_no_symlink
from core.store.paths import MemoryPaths, validate_chunk_id


def make_dir(paths: MemoryPaths, folder: Path) -> None:
    """Create `folder` (and its parents); a new one is made durable in its parent, so files
    written in it (pending evidence) cannot outlive a power cut while their folder does not."""
    paths.ensure_inside_root(folder)
    if folder.is_dir():
        return
    missing = [folder, *(p for p in folder.parents if not p.exists())]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create {folder}: {os_reason(exc)}") from exc
    for created in reversed(missing):
        fsync_dir(created.parent)


def write_chunk_file(paths: MemoryPaths, chunk_id: str, events: Sequence[Event]) -> Path:
    """Atomically write `chunks/<chunk_id>.jsonl`; returns its path."""
    path = paths.chunk_file(chunk_id)
    data = stored_events_bytes(events, f"chunk {chunk_id} event")
    make_dir(paths, paths.chunks_dir)
    atomic_write_bytes(path, data)
    return path


def read_jsonl(path: Path) -> tuple[list[Event], list[CorruptLine]]:
    try:
        data = read_bytes_no_symlink(path)
    except FileNotFoundError:
        raise StoreError(f"missing file {path}") from None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {os_reason(exc)}") from exc
    parsed = parse_event_lines(data, final=True)
    return parsed.events, parsed.corrupt


def read_chunk_events(paths: MemoryPaths, chunk_id: str) -> tuple[list[Event], list[CorruptLine]]:
    """The events of a chunk file and its unparsable lines; StoreError when it is missing."""
    path = paths.chunk_file(chunk_id)
    paths.ensure_inside_root(paths.chunks_dir)
    return read_jsonl(path)


def _valid_stem(name: str, suffix: str) -> str | None:
    if not name.endswith(suffix):
        return None
    stem = name[: -len(suffix)]
    try:
        return validate_chunk_id(stem)
    except BadInputError:
        return None


def list_chunk_files(paths: MemoryPaths, warnings: list[str] | None = None) -> list[str]:
    """Ids of the `*.jsonl` files in chunks/ (sorted); files with invalid names are skipped."""
    return jsonl_ids(paths, paths.chunks_dir, "chunk", warnings)


def chunk_file_names(paths: MemoryPaths, not_regular: set[str] | None = None) -> set[str]:
    """The stems of `chunks/*.jsonl`, from one listing (no stat, no id check): what is cheap
    to compare with the index's ids at 10,000 chunks. `list_chunk_files` is the checked list.

    With `not_regular`, the stems whose entry is no regular file (a FIFO, a folder) are put
    there instead: the directory entry's type says so without a stat, and status must warn
    about a chunk that cannot be recalled from."""
    folder = paths.chunks_dir
    paths.ensure_inside_root(folder)
    names: set[str] = set()
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                name = entry.name
                if not name.endswith(".jsonl") or name.startswith("."):
                    continue
                if not_regular is not None and not entry.is_file():
                    not_regular.add(name[:-6])
                else:
                    names.add(name[:-6])
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise StoreError(f"cannot list {folder}: {os_reason(exc)}") from exc
    return names


def jsonl_ids(paths: MemoryPaths, folder: Path, noun: str, warnings: list[str] | None) -> list[str]:
    """Sorted ids of the `<id>.jsonl` files in `folder`; invalid names skipped with a warning."""
    paths.ensure_inside_root(folder)
    try:
        with os.scandir(folder) as listing:
            names = sorted(d.name for d in listing if d.is_file())
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"cannot list {folder}: {os_reason(exc)}") from exc
    ids: list[str] = []
    for name in names:
        if not name.endswith(".jsonl") or name.startswith("."):
            continue
        cid = _valid_stem(name, ".jsonl")
        if cid is None:
            if warnings is not None:
                warnings.append(f"{folder / name}: not a valid {noun} id; ignored")
            continue
        ids.append(cid)
    return ids


__all__ = [
    "chunk_file_names",
    "jsonl_ids",
    "list_chunk_files",
    "make_dir",
    "read_chunk_events",
    "read_jsonl",
    "write_chunk_file",
]
