"""Recall for one MemoryManager: the searches across the active session, its pending
evidence and (on request) the archives, and what they keep between calls — the open
chunks/recall.sqlite of each session, the in-memory index the active session falls back to
(rebuilt incrementally: a chunk whose file and summary did not change is not analysed
again), and the pending evidence's index, valid until the folder or events.jsonl change.

The manager wires it: it forwards `recall`, tells it when a pass added a chunk, and drops
its caches after a rotation or a repair.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from core.errors import SessionMemoryError, StoreError
from core.events import Event
from core.index.chunk_files import read_chunk_events
from core.index.pending import list_pending
from core.index.reader import read_index
from core.recall.ranking import (
    AnalyzedDoc,
    Part,
    RecallDoc,
    RecallIndex,
    RecallResult,
    analyze,
    search,
)
from core.recall.sqlite_index import PersistentRecallIndex, RecallIndexUnavailable
from core.store.paths import MemoryPaths
from core.store.session_store import SessionStore

MAX_WARNINGS = 20


class RecallService:
    """Searches and their caches for one manager's memory root (thread-safe: one search at a
    time, under `lock`)."""

    def __init__(
        self,
        store: SessionStore,
        memory_dir: Path,
        *,
        read_only: bool,
        hot_events: Callable[[], list[Event]],
    ) -> None:
        self.store = store
        self.paths = store.paths
        self.memory_dir = memory_dir
        self.read_only = read_only
        self._hot_events = hot_events
        self.lock = threading.Lock()
        self._pending: tuple[tuple[Any, ...], RecallIndex] | None = None
        self._active: tuple[tuple[Any, ...], RecallIndex] | None = None
        self._docs: dict[str, tuple[Any, AnalyzedDoc]] = {}
        """Chunk id -> (its file's stat, its analysis): what a rebuilt index reuses."""
        self.persistent = True
        """Search through chunks/recall.sqlite (False: the in-memory index, the baseline)."""
        self.files: dict[Path, PersistentRecallIndex] = {}
        self.warnings: list[str] = []
        """Why recall fell back to the in-memory index or rebuilt its file (newest last)."""
        self.last_index_ms: float | None = None
        """Time the last pass's hook spent adding its chunk to chunks/recall.sqlite."""

    def recall(self, query: str, limit: int, all_sessions: bool) -> RecallResult:
        """Through chunks/recall.sqlite when it can be used, else the in-memory index, with a
        warning (see MemoryManager.recall)."""
        with self.lock:
            try:
                return self._search(query, limit, all_sessions, self.persistent)
            except RecallIndexUnavailable as exc:
                self.warn(f"{exc}; searching the chunk files in memory")
                return self._search(query, limit, all_sessions, False)

    def forget(self) -> None:
        """Drop the in-memory indexes (the session was rotated or repaired)."""
        self._pending = self._active = None

    def rebuild_file(self) -> bool:
        """Rebuild the active session's chunks/recall.sqlite (repair); False, with a warning,
        when it cannot be used."""
        with self.lock:
            try:
                self.file_for(self.paths).rebuild()
            except RecallIndexUnavailable as exc:
                self.warn(f"{exc}; recall searches the chunk files in memory")
                return False
        return True

    def _search(self, query: str, limit: int, all_sessions: bool, persistent: bool) -> RecallResult:
        with contextlib.ExitStack() as stack:
            active, indexed = self._session_part(stack, self.paths, persistent, all_sessions)
            parts = [active]
            pending = self._pending_index(indexed)
            if pending is not None:
                parts.append(Part(pending, active.session_id))
            if all_sessions:
                for child in self._archive_dirs():
                    paths = MemoryPaths(self.memory_dir, session=child)
                    try:
                        parts.append(self._session_part(stack, paths, persistent, True)[0])
                    except (SessionMemoryError, OSError) as exc:  # never stops the search
                        self.warn(f"archived session {child.name} not searched: {exc}")
            return search(parts, query, limit)

    def _session_part(
        self, stack: contextlib.ExitStack, paths: MemoryPaths, persistent: bool, label: bool
    ) -> tuple[Part, set[str]]:
        """One session's chunks as a search part, and their ids."""
        archived = paths.is_archive
        session_id = self._session_label(paths) if label else None
        if not paths.index.exists():
            read_index(paths)  # a missing index is empty; anything else it raises
            return Part(RecallIndex(), session_id, archived), set()
        if persistent:
            store = self.file_for(paths)
            try:
                stack.enter_context(store.reading())
            except RecallIndexUnavailable as exc:
                self.warn(f"{exc}; searching the chunk files in memory")
            else:
                self._take_warnings(store)
                return Part(store, session_id, archived), set(store.chunk_ids())
        index = _memory_index(paths) if archived else self._active_recall_index()[1]
        return Part(index, session_id, archived), {d.chunk_id for d in index.docs}

    def _session_label(self, paths: MemoryPaths) -> str:
        if paths.is_archive:
            return paths.session.name
        try:
            return self.store.read_state().session_id if paths.state.exists() else "none"
        except SessionMemoryError:
            return "none"

    def _archive_dirs(self) -> list[Path]:
        return [c for c in self.paths.archived_sessions() if c != self.paths.session]

    def file_for(self, paths: MemoryPaths) -> PersistentRecallIndex:
        key = paths.session
        store = self.files.get(key)
        if store is None:
            # An archive is read-only from its rotation on: its index is never written, so a
            # search over it leaves no -wal/-shm there (even from a writable manager).
            store = self.files[key] = PersistentRecallIndex(
                paths, _chunk_events, read_only=self.read_only or paths.is_archive
            )
        return store

    def close_files(self) -> None:
        for store in self.files.values():
            store.close()
        self.files.clear()

    def _take_warnings(self, store: PersistentRecallIndex) -> None:
        for warning in store.warnings:
            self.warn(warning)
        store.warnings.clear()

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        del self.warnings[:-MAX_WARNINGS]

    def index_new_chunks(self) -> None:
        """After a pass that added a chunk: add it to chunks/recall.sqlite now, so the next
        recall (in any process) finds the file up to date. Never fails the pass."""
        if not self.persistent:
            return
        start = time.perf_counter()
        with self.lock:
            store = self.file_for(self.paths)
            try:
                store.catch_up()
            except (RecallIndexUnavailable, SessionMemoryError) as exc:
                self.warn(f"{exc}; the next recall will try again")
            finally:
                store.release()  # a runtime that only writes holds no index file open
            self._take_warnings(store)
        self.last_index_ms = (time.perf_counter() - start) * 1000.0

    def _pending_index(self, indexed: set[str]) -> RecallIndex | None:
        """Pending evidence whose events left the hot window (few documents, which depend on
        the hot window): analysed in memory, cached until the folder or events.jsonl change."""
        listing = _listing_key(self.paths.pending_dir)
        if not listing:
            return None
        key = (_stat_key(self.paths.index), _stat_key(self.paths.events), listing)
        if self._pending is not None and self._pending[0] == key:
            return self._pending[1]
        pending = list_pending(self.paths)
        hot_ids = {e.get("id") for e in self._hot_events()}
        docs: list[RecallDoc] = []
        for p in pending:
            if p.meta.get("chunk_id") in indexed:
                continue  # a pass committed it and has yet to delete the evidence
            gone = [e for e in p.events if e.get("id") not in hot_ids]
            if gone:
                summary = p.meta.get("summary")
                text = summary if isinstance(summary, str) else ""
                docs.append(RecallDoc(p.pending_id, "pending", text, gone))
        index = RecallIndex(docs)
        self._pending = (key, index)
        return index

    def _active_recall_index(self) -> tuple[tuple[Any, ...], RecallIndex]:
        paths = self.paths
        key = (_stat_key(paths.index), _stat_key(paths.chunks_dir))
        cached = self._active
        if cached is not None and cached[0] == key:
            return cached
        docs: dict[str, tuple[Any, AnalyzedDoc]] = {}
        for entry in read_index(paths).entries:
            cid = entry.chunk_id
            try:
                file_key: Any = _stat_key(paths.chunk_file(cid))
            except SessionMemoryError:
                file_key = None
            old = self._docs.get(cid)
            if old is not None and old[0] == file_key and old[1].doc.summary == entry.summary:
                docs[cid] = old
                continue
            events = _chunk_events(paths, cid)
            doc = RecallDoc(cid, "active", entry.summary, events, load=_chunk_loader(paths, cid))
            docs[cid] = (file_key, analyze(doc))
        analyzed = [a for _, a in docs.values()]
        if cached is not None and _starts_with(analyzed, cached[1].analyzed):
            index = cached[1].extended(analyzed[len(cached[1].analyzed) :])
        else:
            index = RecallIndex(analyzed)
        self._active = (key, index)
        self._docs = docs
        return key, index


def _listing_key(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and mtimes of a folder's files (empty when it does not exist)."""
    out: list[tuple[str, int, int]] = []
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        for entry in it:
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                out.append((entry.name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


def _chunk_events(paths: MemoryPaths, chunk_id: str) -> list[Event]:
    """A chunk's events for recall; an unreadable chunk file leaves its summary searchable."""
    try:
        return read_chunk_events(paths, chunk_id)[0]
    except StoreError:
        return []


def _chunk_loader(paths: MemoryPaths, chunk_id: str) -> Callable[[], list[Event]]:
    return lambda: _chunk_events(paths, chunk_id)


def _memory_index(paths: MemoryPaths) -> RecallIndex:
    """A session's chunks analysed in memory (an archive whose recall.sqlite is unusable)."""
    return RecallIndex(
        RecallDoc(
            e.chunk_id,
            "active",
            e.summary,
            _chunk_events(paths, e.chunk_id),
            load=_chunk_loader(paths, e.chunk_id),
        )
        for e in read_index(paths).entries
    )


def _starts_with(items: Sequence[object], prefix: Sequence[object]) -> bool:
    return len(items) >= len(prefix) and all(a is b for a, b in zip(prefix, items, strict=False))


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    with contextlib.suppress(OSError):
        st = path.stat()
        return (st.st_ino, st.st_size, st.st_mtime_ns)
    return None


__all__ = ["RecallService"]
