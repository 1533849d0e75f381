"""Crash recovery (contract §8): what a pass that died half way left is finished or undone,
under the session lock, by every pass, `repair` and `rotate`; and `write_summaries`, the whole
re-render of summary.md and summary_archive.md that recovery and repair use.

Pending evidence whose events are all still in events.jsonl is deleted; evidence already
indexed is deleted; evidence cut from events.jsonl but not indexed is finished (chunk file,
index entry, summaries, then the pending file deleted) under the chunk id its sidecar recorded.
A torn in-place index append is cut back first. Nothing is lost, nothing is doubled.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.compaction.filerecord import FILES_KEY, next_files
from core.compaction.summaries import (
    render_summary,
)
from core.config import CompactionConfig
from core.errors import ChunkIdError, IndexCorruptError, SessionMemoryError, StoreError
from core.events import Event, now_ts
from core.index.catalog import (
    catalog_path,
    read_catalog,
    rebuild_catalog,
    truncate_torn_append,
    write_index,
)
from core.index.chunk_files import (
    chunk_file_names,
    list_chunk_files,
    read_chunk_events,
    write_chunk_file,
)
from core.index.format import ChunkEntry
from core.index.pending import PendingEvidence, delete_pending, list_pending
from core.index.reader import read_index
from core.status import archive_info, unreadable_archive
from core.store.atomic import (
    TEMP_NAME_RE,
    atomic_write_text,
)
from core.store.faults import fault_point
from core.store.ledger import check_ledger
from core.store.paths import CHUNK_ID_RE, MemoryPaths
from core.store.session_store import SessionStore
from core.summarizer import (
    ExtractiveSummarizer,
    summarize_with_fallback,
)


@contextlib.contextmanager
def maintenance_slot(store: SessionStore, timeout: float = 0) -> Iterator[bool]:
    """Hold M/.maintenance.lock, the slot a pass, `repair` and a rotation each hold while
    they work: yields False when another holder, in this process or any other, still holds
    it after `timeout` seconds (0: do not wait)."""
    store.paths.root.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    while True:
        with store.maintenance_lock() as got:
            if got or time.monotonic() >= deadline:
                yield got
                return
        time.sleep(0.05)


def write_summaries(
    store: SessionStore, config: CompactionConfig, entries: Sequence[ChunkEntry]
) -> None:
    """Re-render summary.md and summary_archive.md from the index (their one source of truth)."""
    rendered = render_summary(
        [(e.chunk_id, e.summary) for e in entries],
        summary_max_chunks=config.summary_max_chunks,
        max_rolling_summary_lines=config.max_rolling_summary_lines,
        max_summary_tokens=config.summarizer.max_summary_tokens,
        files=entries[-1].extra.get(FILES_KEY) if entries else None,
    )
    if not entries:
        return
    atomic_write_text(store.paths.summary, rendered.summary_md)
    fault_point("between_summary_writes")
    if rendered.archive_md or store.paths.summary_archive.exists():
        atomic_write_text(store.paths.summary_archive, rendered.archive_md)


def recover_locked(
    store: SessionStore, config: CompactionConfig, *, thorough: bool = True
) -> dict[str, int]:
    """Finish or undo what a crashed pass left (caller holds the session lock and, unless this
    is a rotation, the maintenance slot). Nothing is lost, nothing is doubled.

    A crashed pass always leaves pending evidence (it is deleted last); `thorough=False` (a
    pass) therefore stops when there is none, while `repair` and rotation also list chunks/
    for chunk files nobody indexed (a file put there by hand, an old crash)."""
    paths = store.paths
    counts: dict[str, int] = {}
    _sweep_leftovers(store, counts)
    pending = list_pending(paths)
    if not pending and (not thorough or not _unindexed_chunk_names(paths)):
        return counts
    for p in pending:
        if _undo_torn_append(paths, p.meta):
            _bump(counts, "index_torn_tail_cut")
    recovery = _Recovery.begin(store, config, counts, bool(pending))
    if recovery is None:
        return counts
    for p in pending:
        recovery.settle(p)
    recovery.index_orphans()
    if recovery.changed:
        write_summaries(store, config, recovery.entries)
    return counts


def _bump(counts: dict[str, int], key: str, n: int = 1) -> None:
    counts[key] = counts.get(key, 0) + n


def _sweep_leftovers(store: SessionStore, counts: dict[str, int]) -> None:
    """Temporary files of writes that died before their rename, and lone pending sidecars."""
    swept = _sweep_temp_files(store)
    if swept:
        _bump(counts, "temp_files_removed", swept)
    orphans = _sweep_orphan_pending_meta(store)
    if orphans:
        _bump(counts, "pending_meta_removed", orphans)


def _unindexed_chunk_names(paths: MemoryPaths) -> bool:
    """Whether chunks/ holds a chunk file the index does not list. The usual case is one
    listing of chunks/ against the catalog's ids, no full parse (a file whose name is no
    chunk id is never indexed)."""
    extra = chunk_file_names(paths)
    if extra:
        extra -= set(read_catalog(paths, write=False).chunk_ids())
    return any(CHUNK_ID_RE.match(name) for name in extra)


@dataclass
class _Recovery:
    """What recovery works on: the index's entries, the chunk files, the ids still in the hot
    window, and the counts it reports."""

    store: SessionStore
    config: CompactionConfig
    counts: dict[str, int]
    entries: list[ChunkEntry]
    indexed: set[str]
    chunk_files: set[str]
    consumed: set[str]
    """Pending ids an index entry records as its source (`source_pending_id`)."""
    hot_ids: set[object]
    changed: bool = False

    @classmethod
    def begin(
        cls, store: SessionStore, config: CompactionConfig, counts: dict[str, int], pending: bool
    ) -> _Recovery | None:
        """Read the index and the hot window; None when, with no evidence pending, every
        chunk file is indexed already."""
        paths = store.paths
        chunk_files = set(list_chunk_files(paths))
        if not pending and not chunk_files:
            return None
        entries = read_index(paths).entries
        indexed = {e.chunk_id for e in entries}
        if not pending and chunk_files <= indexed:
            return None
        consumed = {
            str(e.extra.get("source_pending_id"))
            for e in entries
            if e.extra.get("source_pending_id")
        }
        snap = store.read_events(locked=True)
        hot_ids = {e.get("id") for e in snap.events}
        return cls(store, config, counts, entries, indexed, chunk_files, consumed, hot_ids)

    def settle(self, p: PendingEvidence) -> None:
        """One pending evidence: already indexed → deleted; all still hot → undone; empty →
        deleted; else finished as a chunk."""
        meta_chunk = p.meta.get("chunk_id")
        indexed_as = (
            meta_chunk if isinstance(meta_chunk, str) and meta_chunk in self.indexed else None
        )
        if indexed_as is not None or p.pending_id in self.consumed:
            self._drop_indexed(p, indexed_as)
        elif not p.events:
            delete_pending(self.store.paths, p.pending_id)
            _bump(self.counts, "pending_empty_deleted")
        elif all(e.get("id") in self.hot_ids for e in p.events):
            if isinstance(meta_chunk, str) and meta_chunk in self.chunk_files:
                _delete_chunk_file(self.store, meta_chunk)
                self.chunk_files.discard(meta_chunk)
            delete_pending(self.store.paths, p.pending_id)
            _bump(self.counts, "pending_undone")
        else:
            self._finish(p, meta_chunk)

    def _drop_indexed(self, p: PendingEvidence, chunk_of: str | None) -> None:
        """The pass got as far as the index: the evidence goes. A power cut may have kept
        the index's rename but not the chunk file's link (both in chunks/, synced together
        after the commit): then the evidence is the chunk."""
        paths = self.store.paths
        if chunk_of is not None and chunk_of not in self.chunk_files and p.events:
            write_chunk_file(paths, chunk_of, p.events)
            self.chunk_files.add(chunk_of)
            _bump(self.counts, "chunk_files_restored")
        delete_pending(paths, p.pending_id)
        _bump(self.counts, "pending_already_indexed")
        self.changed = True

    def _previous_files(self) -> object:
        """The file record of the newest entry (what a recovered entry folds its events into)."""
        return self.entries[-1].extra.get(FILES_KEY) if self.entries else None

    def _finish(self, p: PendingEvidence, meta_chunk: object) -> None:
        """Index the evidence's events that left the hot window, under the chunk id the pass
        chose, with its recorded summary and cut when all of them left."""
        paths = self.store.paths
        gone = [e for e in p.events if e.get("id") not in self.hot_ids]
        chunk_id = _pending_chunk_id(p.pending_id, meta_chunk, self.indexed)
        summary = p.meta.get("summary")
        planned = p.meta.get("entry")
        whole = len(gone) == len(p.events) and isinstance(summary, str)
        entry = recovered_entry(
            chunk_id,
            gone,
            self.config,
            summary=summary if whole and isinstance(summary, str) else None,
            cut_meta=planned.get("cut_meta") if whole and isinstance(planned, dict) else None,
            extra={
                "summary_backend": (
                    planned.get("summary_backend", "extractive")
                    if whole and isinstance(planned, dict)
                    else "extractive"
                ),
                "source_pending_id": p.pending_id,
            },
            previous_files=self._previous_files(),
        )
        write_chunk_file(paths, chunk_id, gone)
        fault_point("recovery_after_chunk_write")
        self.entries.append(entry)
        self.indexed.add(chunk_id)
        self.chunk_files.add(chunk_id)
        write_index(paths, self.entries)
        fault_point("recovery_after_index_write")
        delete_pending(paths, p.pending_id)
        _bump(self.counts, "pending_finished")
        self.changed = True

    def index_orphans(self) -> None:
        """Chunk files no entry lists: indexed with what left the hot window, or dropped
        when all their events are still hot."""
        paths = self.store.paths
        for orphan in sorted(self.chunk_files - self.indexed):
            try:
                orphan_events, _bad = read_chunk_events(paths, orphan)
            except (StoreError, ChunkIdError):
                continue
            gone = [e for e in orphan_events if e.get("id") not in self.hot_ids]
            if not gone:
                _delete_chunk_file(self.store, orphan)
                _bump(self.counts, "orphan_chunks_deleted")
                continue
            if len(gone) < len(orphan_events):
                write_chunk_file(paths, orphan, gone)
            self.entries.append(
                recovered_entry(orphan, gone, self.config, previous_files=self._previous_files())
            )
            self.indexed.add(orphan)
            write_index(paths, self.entries)
            _bump(self.counts, "orphan_chunks_indexed")
            self.changed = True


def _undo_torn_append(paths: MemoryPaths, meta: dict[str, Any]) -> bool:
    """A pass that died while appending its entry to index.yaml left a partial entry at the
    end: cut the file back to where the append began (the evidence then re-adds the entry).
    A complete append (the recorded bytes, exactly) is left alone."""
    spec = meta.get("index_append")
    if not isinstance(spec, dict):
        return False
    offset, length, digest = spec.get("offset"), spec.get("length"), spec.get("digest")
    if not (isinstance(offset, int) and isinstance(length, int) and isinstance(digest, str)):
        return False
    if offset <= 0 or length <= 0:
        return False
    return truncate_torn_append(paths, offset, length, digest)


def recovered_entry(
    chunk_id: str,
    events: Sequence[Event],
    config: CompactionConfig,
    *,
    summary: str | None = None,
    cut_meta: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    previous_files: object = None,
) -> ChunkEntry:
    """An index entry for events recovered after a crash or rebuilt by `repair`; without a
    recorded summary the extractive summarizer writes one (no model call during recovery).
    Its file record (core.compaction.filerecord.next_files) is the previous entry's
    (`previous_files`) with these events folded in."""
    if summary is None:
        summary, _ = summarize_with_fallback(
            ExtractiveSummarizer(),
            events,
            max_tokens=config.summarizer.max_summary_tokens,
            redact=config.redact_secrets,
        )
    files = next_files(previous_files, events, redact=config.redact_secrets)
    return ChunkEntry(
        chunk_id=chunk_id,
        created_at=now_ts()[:19] + "Z",
        event_count=len(events),
        first_event_id=events[0].get("id") if events else None,
        last_event_id=events[-1].get("id") if events else None,
        summary=summary,
        cut_meta=cut_meta,
        extra={
            "summary_backend": "extractive",
            **(extra or {}),
            **({FILES_KEY: files} if files is not None else {}),
            "recovered_at": now_ts(),
        },
    )


def _sweep_temp_files(store: SessionStore) -> int:
    """Remove temporary files of atomic writes that died before their rename. Every atomic
    write under session/ holds the session lock, and a pass stages its files holding the
    maintenance slot; the caller holds both (a rotation sweeps only with the slot free), so
    none is in progress."""
    paths = store.paths
    removed = 0
    for folder in (paths.session, paths.chunks_dir, paths.pending_dir):
        paths.ensure_inside_root(folder)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith(".tmp") and TEMP_NAME_RE.match(name):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(folder / name)
                    removed += 1
    return removed


def _sweep_orphan_pending_meta(store: SessionStore) -> int:
    """Remove `<id>.meta.json` sidecars whose `<id>.jsonl` is gone: `delete_pending` removes
    the evidence first, so a crash between the two unlinks leaves the sidecar alone (and
    `write_pending` writes the evidence first, so no pass in progress has a lone sidecar)."""
    folder = store.paths.pending_dir
    store.paths.ensure_inside_root(folder)
    try:
        names = set(os.listdir(folder))
    except OSError:
        return 0
    removed = 0
    for name in names:
        stem = name.removesuffix(".meta.json")
        if stem != name and f"{stem}.jsonl" not in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(folder / name)
                removed += 1
    return removed


def _pending_chunk_id(pending_id: str, meta_chunk: object, indexed: set[str]) -> str:
    """The chunk id the crashed pass chose (the synthetic event may point at it), else the
    pending id itself (contract §8: an id may keep its `pending-` prefix)."""
    if isinstance(meta_chunk, str) and meta_chunk not in indexed:
        try:
            from core.store.paths import validate_chunk_id

            return validate_chunk_id(meta_chunk)
        except ChunkIdError:
            pass
    return pending_id


def _delete_chunk_file(store: SessionStore, chunk_id: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        store.paths.chunk_file(chunk_id).unlink()


def repair(store: SessionStore, config: CompactionConfig) -> dict[str, int]:
    """`repair` (contract §6, §8), holding the maintenance slot: rebuild an unreadable index
    from the chunk files, finish or undo crashed passes, quarantine corrupt lines of
    events.jsonl, render the summaries and the catalog again, recover the archived sessions
    and check the prompt ledger. Returns what it did, by count; the caller refreshes what
    it derives from the files (recall's index). SessionMemoryError when a pass holds the slot."""
    paths = store.paths
    repaired: dict[str, int] = {}
    with maintenance_slot(store, timeout=config.lock_timeout_seconds) as free:
        if not free:
            raise SessionMemoryError(
                f"a maintenance pass holds {paths.maintenance_lock}; try again"
            )
        # Short locks only: the slow parts (reading every chunk file, reading and staging
        # events.jsonl) run holding the maintenance slot alone, so appends go on.
        with store.lock():
            store.ensure_session()
            index_ok = _index_reads(paths)
        if not index_ok:
            repaired["index_rebuilt"] = 1
            repaired["chunks_reindexed"] = _rebuild_index(store, config)
        with store.lock():
            _add_counts(repaired, recover_locked(store, config))
        repaired["corrupt_lines_quarantined"] = store.quarantine_corrupt_lines()
        with store.lock():
            write_summaries(store, config, read_index(paths).entries)
            rebuild_catalog(paths)
            repaired["catalog_rebuilt"] = 1
        _add_counts(repaired, _recover_archives(store, config))
        with store.lock():
            repaired.update(check_ledger(paths))
    return repaired


def _add_counts(counts: dict[str, int], more: dict[str, int]) -> None:
    for key, n in more.items():
        _bump(counts, key, n)


def _index_reads(paths: MemoryPaths) -> bool:
    try:
        read_index(paths)
    except IndexCorruptError:
        return False
    return True


def _rebuild_index(store: SessionStore, config: CompactionConfig) -> int:
    """Index every chunk file again (read without the session lock: the caller holds the
    maintenance slot, so no pass writes chunks meanwhile), then, under a short lock, move
    the unreadable index aside and publish the new one."""
    paths = store.paths
    index = paths.index
    session_id = store.read_state().session_id
    aside = index.with_name(f"index.yaml.corrupt-{_stamp()}")
    entries = _entries_from_chunk_files(paths, config, aside.name)
    with store.lock():
        if store.read_state().session_id != session_id:
            raise SessionMemoryError("the session was rotated during repair; run repair again")
        try:
            os.replace(index, aside)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreError(f"cannot move {index} aside: {exc.strerror}") from exc
        fault_point("during_index_rebuild")
        write_index(paths, entries)
    return len(entries)


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def _entries_from_chunk_files(
    paths: MemoryPaths, config: CompactionConfig, rebuilt_from: str
) -> list[ChunkEntry]:
    entries: list[ChunkEntry] = []
    for chunk_id in sorted(list_chunk_files(paths)):
        entries.append(
            recovered_entry(
                chunk_id,
                read_chunk_events(paths, chunk_id)[0],
                config,
                extra={"rebuilt_from": rebuilt_from},
                previous_files=entries[-1].extra.get(FILES_KEY) if entries else None,
            )
        )
    return entries


def recover_archive(store: SessionStore, archive: Path, config: CompactionConfig) -> dict[str, int]:
    """Finish or undo what a crashed pass left in an archived session (caller holds the
    session lock). No pass commits into an archive (a pass abandons once its session was
    rotated), so there is nothing in progress to wait for."""
    archived = SessionStore(store.paths.root, lock_timeout=store.lock_timeout, session=archive)
    archived.paths.ensure_inside_root()
    return recover_locked(archived, config)


def _recover_archives(store: SessionStore, config: CompactionConfig) -> dict[str, int]:
    """Finish or undo what crashed passes left in archived sessions (one short lock each);
    an archive that cannot be recovered is counted, and left as it is."""
    paths = store.paths
    counts: dict[str, int] = {}
    if paths.archive_root.is_symlink():
        return counts
    for child in paths.archived_sessions():
        try:
            if _rebuild_archive_index(store, config, child):
                _bump(counts, "archive_indexes_rebuilt")
            with store.lock():
                done = recover_archive(store, child, config)
        except SessionMemoryError as exc:
            _bump(counts, "archives_unrecoverable")
            store.warnings.append(unreadable_archive(paths, child, exc))
            continue
        if done:
            _bump(counts, "archives_recovered")
        try:
            archive_info(paths.root, child)
        except (SessionMemoryError, OSError) as exc:  # a FIFO as its state.json, …
            _bump(counts, "archives_unreadable")
            store.warnings.append(unreadable_archive(paths, child, exc))
    return counts


def _rebuild_archive_index(store: SessionStore, config: CompactionConfig, child: Path) -> bool:
    """An archived session whose index.yaml cannot be read (not YAML, an alias bomb, not a
    regular file): the file is moved aside as `index.yaml.corrupt-<time>` and the index
    rebuilt from the archive's chunk files, as `repair` does for the active session.
    False when its index reads (or there is none and no chunk file)."""
    paths = MemoryPaths(store.paths.root, session=child)
    paths.ensure_inside_root(paths.chunks_dir)
    try:
        read_index(paths)
        return False
    except IndexCorruptError:
        pass
    except StoreError:
        if not os.path.lexists(paths.index):
            raise
    aside = paths.index.with_name(f"index.yaml.corrupt-{_stamp()}")
    entries = _entries_from_chunk_files(paths, config, aside.name)
    with store.lock():
        try:
            os.replace(paths.index, aside)  # a link or a FIFO is moved, never opened
        except OSError as exc:
            raise StoreError(f"cannot move {paths.index} aside: {exc.strerror}") from exc
        with contextlib.suppress(OSError):
            catalog_path(paths).unlink()
        write_index(paths, entries)
    return True
