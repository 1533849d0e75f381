"""MemoryManager: the API an agent runtime uses (design: Flow; contract §5, §8–§11).

Appends go straight to the store under the session lock; maintenance runs on a background
thread, coalesced by a pending flag, so a turn's commit never waits for a summarizer.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.atomic import open_no_symlink, read_bytes_no_symlink
from core.catalog import read_catalog, rebuild_catalog
from core.chunks import (
    chunk_file_names,
    list_chunk_files,
    list_pending,
    read_chunk_events,
    read_index,
    write_index,
)
from core.config import CompactionConfig, load_config
from core.errors import IndexCorruptError, SessionMemoryError, StoreError
from core.events import Event, make_event
from core.faults import fault_point
from core.jsonl import parse_event_lines
from core.maintenance import (
    PassResult,
    maintenance_slot,
    recover_locked,
    recovered_entry,
    run_pass,
    trigger_for,
    write_summaries,
)
from core.paths import MemoryPaths
from core.planner import CompactionPlan, plan_compaction
from core.prompt import build_prompt_messages
from core.reader import EventTail
from core.recall import AnalyzedDoc, Part, RecallDoc, RecallIndex, RecallResult, analyze, search
from core.recall_index import PersistentRecallIndex, RecallIndexUnavailable
from core.rotation import RotationResult, recover_archive, rotate
from core.state import SessionState
from core.store import SessionStore
from core.summarizer import Summarizer, make_summarizer
from core.trigger import TriggerDecision

_NO_STATE = SessionState(session_id="none", created_at="")
"""Stands for a session not created yet: nothing recorded, no pass (cold start)."""


@dataclass
class Telemetry:
    """Counters a runtime exports; the TUI shows them."""

    passes: int = 0
    compactions: int = 0
    skips: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    last_error: str | None = None
    pending_chunks_recalled: int = 0
    last_pass: PassResult | None = None
    max_append_ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "passes": self.passes,
            "compactions": self.compactions,
            "skips": dict(self.skips),
            "errors": self.errors,
            "last_error": self.last_error,
            "pending_chunks_recalled": self.pending_chunks_recalled,
            "last_pass_timings_ms": self.last_pass.timings_ms if self.last_pass else None,
            "max_append_ms": round(self.max_append_ms, 3),
        }


@dataclass(frozen=True)
class ArchiveInfo:
    session_id: str
    path: Path
    event_count: int
    chunk_count: int
    created_at: str | None
    size_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "path": str(self.path),
            "event_count": self.event_count,
            "chunk_count": self.chunk_count,
            "created_at": self.created_at,
            "size_bytes": self.size_bytes,
        }


@dataclass(frozen=True)
class PlanReport:
    """What a pass would do now: the trigger's verdict and the planner's cut."""

    trigger: TriggerDecision
    plan: CompactionPlan
    events: list[Event]
    tokens: list[int]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "should_compress": self.trigger.should_compress,
            "trigger": self.trigger.trigger,
            "trigger_reason": self.trigger.reason,
        }
        out.update(self.plan.to_json(self.events))
        out["should_compress"] = self.trigger.should_compress
        out["trigger"] = self.trigger.trigger
        return out


@dataclass(frozen=True)
class SessionStatus:
    memory_dir: Path
    session_id: str | None
    event_count: int
    hot_tokens: int
    last_prompt_tokens: int | None
    prompt_tokens: int | None
    """The figure the trigger uses: last_prompt_tokens plus the appended events' estimate."""
    prompt_tokens_source: str
    prompt_tokens_appended: int
    context_window: int
    model: str | None
    should_compress: bool
    trigger: str | None
    trigger_reason: str
    chunk_count: int
    pending_count: int
    corrupt_lines: int
    has_compressed_history: bool
    archives: list[ArchiveInfo]
    index_error: str | None
    warnings: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "memory_dir": str(self.memory_dir),
            "session_id": self.session_id,
            "event_count": self.event_count,
            "hot_tokens": self.hot_tokens,
            "last_prompt_tokens": self.last_prompt_tokens,
            "prompt_tokens": self.prompt_tokens,
            "prompt_tokens_source": self.prompt_tokens_source,
            "prompt_tokens_appended": self.prompt_tokens_appended,
            "context_window": self.context_window,
            "model": self.model,
            "should_compress": self.should_compress,
            "trigger": self.trigger,
            "trigger_reason": self.trigger_reason,
            "chunk_count": self.chunk_count,
            "pending_count": self.pending_count,
            "corrupt_lines": self.corrupt_lines,
            "has_compressed_history": self.has_compressed_history,
            "archives": [
                {
                    "session_id": a.session_id,
                    "event_count": a.event_count,
                    "chunk_count": a.chunk_count,
                }
                for a in self.archives
            ],
            "index_error": self.index_error,
            "warnings": list(self.warnings),
        }


class MemoryManager:
    """One active session under a memory root. Safe to share between threads; other
    processes (the inspector, the CLI) may act on the same root at the same time."""

    def __init__(
        self,
        memory_dir: Path | str,
        config: CompactionConfig | None = None,
        *,
        summarizer: Summarizer | None = None,
        model: str | None = None,
        session_dir: Path | None = None,
        read_only: bool = False,
    ) -> None:
        self.memory_dir = Path(memory_dir)
        self.config = config if config is not None else load_config(memory_dir=memory_dir).config
        self.summarizer: Summarizer = summarizer or make_summarizer(self.config.summarizer)
        self.model = model
        self.read_only = read_only or session_dir is not None
        self.store = SessionStore(
            self.memory_dir,
            lock_timeout=self.config.lock_timeout_seconds,
            session=session_dir,
            durability=self.config.durability,
            fsync_interval_ms=self.config.fsync_interval_ms,
        )
        self.paths = self.store.paths
        self.telemetry = Telemetry()
        self.on_pass: Callable[[PassResult], None] | None = None
        self._cond = threading.Condition()
        self._running = False
        self._pending = False
        self._thread: threading.Thread | None = None
        self._recall_lock = threading.Lock()
        self._hot_lock = threading.Lock()
        self._hot_tail = EventTail(self.paths.events, tokens=False)
        self._hot_cache: list[Event] = []
        self._recall_cache: tuple[tuple[Any, ...], RecallIndex] | None = None
        self._recall_active: tuple[tuple[Any, ...], RecallIndex] | None = None
        self._recall_docs: dict[str, tuple[Any, AnalyzedDoc]] = {}
        """Chunk id -> (its file's stat, its analysis): what a rebuilt index reuses."""
        self.persistent_recall = True
        """Search through chunks/recall.sqlite (False: the in-memory index, the baseline)."""
        self._recall_files: dict[Path, PersistentRecallIndex] = {}
        self.recall_warnings: list[str] = []
        """Why recall fell back to the in-memory index or rebuilt its file (newest last)."""
        self.last_recall_index_ms: float | None = None
        """Time the last pass's hook spent adding its chunk to chunks/recall.sqlite."""

    # -- appends ---------------------------------------------------------------------------

    def _writable(self) -> None:
        if self.read_only:
            raise StoreError(f"{self.paths.session} is open read-only")

    def append_many(
        self, events: Sequence[Mapping[str, Any]], *, where: str = "event"
    ) -> list[Event]:
        self._writable()
        start = time.perf_counter()
        stored = self.store.append_events(events, where=where)
        elapsed = (time.perf_counter() - start) * 1000.0
        self.telemetry.max_append_ms = max(self.telemetry.max_append_ms, elapsed)
        return stored

    def append(self, event: Mapping[str, Any]) -> Event:
        return self.append_many([event])[0]

    def begin_run(self, user_text: str, **fields: Any) -> Event:
        """Append the run's user_input; a long idle gap first closes the session."""
        self._writable()
        if self._idle_gap_exceeded():
            self.rotate()
        return self.append(make_event("user_input", user_text, **fields))

    def _idle_gap_exceeded(self) -> bool:
        gap = self.config.idle_gap_minutes
        if gap <= 0:
            return False
        try:
            st = self.paths.events.stat()
        except FileNotFoundError:
            return False
        return st.st_size > 0 and (time.time() - st.st_mtime) > gap * 60.0

    def record_prompt_tokens(self, n: int, model: str | None = None) -> None:
        """Record the provider's prompt size of the latest model call; the trigger adds what is
        appended after it by estimate (contract §5)."""
        self._writable()
        self.store.record_prompt_tokens(int(n), model=model or self.model)

    def commit_run(self, assistant_text: str, **fields: Any) -> Event:
        event = self.append(make_event("assistant_output", assistant_text, **fields))
        self.store.settle_appends()  # durability `run`: the run is on disk once committed
        self.request_maintenance()
        return event

    # -- maintenance -----------------------------------------------------------------------

    def request_maintenance(self) -> None:
        """Schedule a pass on a background thread and return at once; a request while one
        runs sets the pending flag, which runs exactly one more pass after it."""
        if self.read_only:
            return
        with self._cond:
            if self._running:
                self._pending = True
                return
            self._running = True
        self._thread = threading.Thread(
            target=self._maintenance_loop, name="session-maintenance", daemon=True
        )
        self._thread.start()

    def _maintenance_loop(self) -> None:
        while True:
            try:
                self._run_and_record()
            except Exception as exc:  # the thread must survive: reported via telemetry
                self.telemetry.errors += 1
                self.telemetry.last_error = f"{type(exc).__name__}: {exc}"
            with self._cond:
                if self._pending:
                    self._pending = False
                    continue
                self._running = False
                self._cond.notify_all()
                return

    @property
    def maintenance_running(self) -> bool:
        with self._cond:
            return self._running

    def wait_for_maintenance(self, timeout: float | None = None) -> bool:
        """Block until no background pass runs or is pending; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._running, timeout=timeout)

    def _run_and_record(
        self,
        *,
        force: bool = False,
        focus: str | None = None,
        prompt_tokens: int | None = None,
    ) -> PassResult:
        result = run_pass(
            self.store,
            self.config,
            self.summarizer,
            force=force,
            prompt_tokens=prompt_tokens,
            model=self.model,
            focus=focus,
        )
        self.telemetry.passes += 1
        self.telemetry.last_pass = result
        if result.compacted:
            self.telemetry.compactions += 1
        else:
            key = (result.reason or "unknown").split(":", 1)[0]
            self.telemetry.skips[key] = self.telemetry.skips.get(key, 0) + 1
        if result.compacted:
            self._index_new_chunks()
        if self.on_pass is not None:
            self.on_pass(result)
        return result

    def save(
        self,
        *,
        force: bool = False,
        focus: str | None = None,
        prompt_tokens: int | None = None,
    ) -> PassResult:
        """Run the maintenance pass synchronously (design: MemoryManager.Save)."""
        self._writable()
        return self._run_and_record(force=force, focus=focus, prompt_tokens=prompt_tokens)

    compact = save

    def plan(
        self,
        *,
        prompt_tokens: int | None = None,
        model: str | None = None,
        config: CompactionConfig | None = None,
    ) -> PlanReport:
        """What a pass would do now; changes nothing."""
        cfg = config or self.config
        snap = self.store.read_events()
        state = self.store.read_state() if self.paths.state.exists() else None
        decision = trigger_for(
            state or _NO_STATE,
            snap.events,
            snap.tokens,
            cfg,
            model or self.model,
            prompt_tokens,
        )
        plan = plan_compaction(snap.events, cfg, tokens=snap.tokens)
        return PlanReport(trigger=decision, plan=plan, events=snap.events, tokens=snap.tokens)

    def rotate(self) -> RotationResult:
        self._writable()
        with self._recall_lock:
            self._close_recall_files()  # before the rename: SQLite removes its WAL by path
            result = rotate(self.store, self.config)
        self._recall_cache = self._recall_active = None
        return result

    def repair(self) -> dict[str, int]:
        """Finish or undo crashed passes, rebuild an unreadable index from the chunk files,
        and quarantine corrupt lines of events.jsonl (contract §6, §8)."""
        self._writable()
        repaired: dict[str, int] = {}
        with maintenance_slot(self.store, timeout=self.config.lock_timeout_seconds) as free:
            if not free:
                raise SessionMemoryError(
                    f"a maintenance pass holds {self.paths.maintenance_lock}; try again"
                )
            # Short locks only: the slow parts (reading every chunk file, reading and staging
            # events.jsonl) run holding the maintenance slot alone, so appends go on.
            with self.store.lock():
                self.store.ensure_session()
                try:
                    read_index(self.paths)
                    index_ok = True
                except IndexCorruptError:
                    index_ok = False
            if not index_ok:
                repaired["index_rebuilt"] = 1
                repaired["chunks_reindexed"] = self._rebuild_index()
            with self.store.lock():
                for key, n in recover_locked(self.store, self.config).items():
                    repaired[key] = repaired.get(key, 0) + n
            repaired["corrupt_lines_quarantined"] = self.store.quarantine_corrupt_lines()
            with self.store.lock():
                entries = read_index(self.paths).entries
                write_summaries(self.store, self.config, entries)
                rebuild_catalog(self.paths)
                repaired["catalog_rebuilt"] = 1
            for key, n in self._recover_archives().items():
                repaired[key] = repaired.get(key, 0) + n
        self._recall_cache = self._recall_active = None
        if self.persistent_recall:
            with self._recall_lock:
                try:
                    self._recall_file(self.paths).rebuild()
                    repaired["recall_index_rebuilt"] = 1
                except RecallIndexUnavailable as exc:
                    self._recall_warn(f"{exc}; recall searches the chunk files in memory")
        return repaired

    def _rebuild_index(self) -> int:
        """Index every chunk file again (read without the session lock: the caller holds the
        maintenance slot, so no pass writes chunks meanwhile), then, under a short lock, move
        the unreadable index aside and publish the new one."""
        index = self.paths.index
        session_id = self.store.read_state().session_id
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        aside = index.with_name(f"index.yaml.corrupt-{stamp}")
        entries = [
            recovered_entry(
                chunk_id,
                read_chunk_events(self.paths, chunk_id)[0],
                self.config,
                extra={"rebuilt_from": aside.name},
            )
            for chunk_id in sorted(list_chunk_files(self.paths))
        ]
        with self.store.lock():
            if self.store.read_state().session_id != session_id:
                raise SessionMemoryError("the session was rotated during repair; run repair again")
            try:
                os.replace(index, aside)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise StoreError(f"cannot move {index} aside: {exc.strerror}") from exc
            fault_point("during_index_rebuild")
            write_index(self.paths, entries)
        return len(entries)

    def _recover_archives(self) -> dict[str, int]:
        """Finish or undo what crashed passes left in archived sessions (one short lock each);
        an archive that cannot be recovered is counted, and left as it is."""
        counts: dict[str, int] = {}
        archive_root = self.paths.archive_root
        if archive_root.is_symlink() or not archive_root.is_dir():
            return counts
        for child in sorted(archive_root.iterdir()):
            if child.is_symlink() or not child.is_dir():
                continue
            try:
                with self.store.lock():
                    done = recover_archive(self.store, child, self.config)
            except SessionMemoryError:
                counts["archives_unrecoverable"] = counts.get("archives_unrecoverable", 0) + 1
                continue
            if done:
                counts["archives_recovered"] = counts.get("archives_recovered", 0) + 1
        return counts

    # -- reading ---------------------------------------------------------------------------

    def has_compressed_history(self) -> bool:
        """True when the active session has indexed chunks (archives never count); read
        through the catalog, so a prompt does not parse a 10,000-chunk index."""
        try:
            return len(read_catalog(self.paths)) > 0
        except IndexCorruptError:
            return self.paths.summary.exists() and self.paths.summary.stat().st_size > 0

    def build_prompt(self, system_prompt: str, task: str) -> list[dict[str, Any]]:
        summary_md = None
        if self.has_compressed_history() and self.paths.summary.exists():
            try:
                data = read_bytes_no_symlink(self.paths.summary)
            except OSError as exc:
                raise StoreError(
                    f"cannot read {self.paths.summary}: {exc.strerror or exc}"
                ) from exc
            summary_md = data.decode("utf-8", errors="replace")
        return build_prompt_messages(system_prompt, summary_md, self._hot_events(), task)

    def _hot_events(self) -> list[Event]:
        """The hot window's events, read incrementally: a prompt built per model call costs
        the bytes appended since the previous one, not the whole window (a pass or rotation
        replaces the file, and the tail reads it again from the start)."""
        with self._hot_lock:
            update = self._hot_tail.poll()
            if update.reset:
                self._hot_cache = []
            self._hot_cache.extend(r.event for r in update.records if r.event is not None)
            return list(self._hot_cache)

    def recall(self, query: str, limit: int = 5, *, all_sessions: bool = False) -> RecallResult:
        """Search the active session's compacted history: indexed chunks (source "active") and
        pending evidence already cut from the hot window (source "pending"). Archives only with
        `all_sessions` (then every hit names its session).

        The chunks are searched through chunks/recall.sqlite, brought up to date first (a
        pass's chunk is added by the pass's hook, or here); if the file cannot be used, the
        in-memory index answers, with a warning in `recall_warnings`."""
        with self._recall_lock:
            try:
                result = self._search(query, limit, all_sessions, self.persistent_recall)
            except RecallIndexUnavailable as exc:
                self._recall_warn(f"{exc}; searching the chunk files in memory")
                result = self._search(query, limit, all_sessions, False)
        self.telemetry.pending_chunks_recalled += result.pending_chunks_recalled
        return result

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
                    parts.append(self._session_part(stack, paths, persistent, True)[0])
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
            store = self._recall_file(paths)
            try:
                stack.enter_context(store.reading())
            except RecallIndexUnavailable as exc:
                self._recall_warn(f"{exc}; searching the chunk files in memory")
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
        root = self.paths.archive_root
        with contextlib.suppress(OSError):
            return sorted(
                c
                for c in root.iterdir()
                if c.is_dir() and not c.is_symlink() and c != self.paths.session
            )
        return []

    def _recall_file(self, paths: MemoryPaths) -> PersistentRecallIndex:
        key = paths.session
        store = self._recall_files.get(key)
        if store is None:
            store = self._recall_files[key] = PersistentRecallIndex(
                paths, _chunk_events, read_only=self.read_only
            )
        return store

    def _close_recall_files(self) -> None:
        for store in self._recall_files.values():
            store.close()
        self._recall_files.clear()

    def _take_warnings(self, store: PersistentRecallIndex) -> None:
        for warning in store.warnings:
            self._recall_warn(warning)
        store.warnings.clear()

    def _recall_warn(self, message: str) -> None:
        self.recall_warnings.append(message)
        del self.recall_warnings[:-20]

    def _index_new_chunks(self) -> None:
        """After a pass that added a chunk: add it to chunks/recall.sqlite now, so the next
        recall (in any process) finds the file up to date. Never fails the pass."""
        if not self.persistent_recall:
            return
        start = time.perf_counter()
        with self._recall_lock:
            store = self._recall_file(self.paths)
            try:
                store.refresh()
            except (RecallIndexUnavailable, SessionMemoryError) as exc:
                self._recall_warn(f"{exc}; the next recall will try again")
            finally:
                store.release()  # a runtime that only writes holds no index file open
            self._take_warnings(store)
        self.last_recall_index_ms = (time.perf_counter() - start) * 1000.0

    def _pending_index(self, indexed: set[str]) -> RecallIndex | None:
        """Pending evidence whose events left the hot window (few documents, which depend on
        the hot window): analysed in memory, cached until the folder or events.jsonl change."""
        listing = _listing_key(self.paths.pending_dir)
        if not listing:
            return None
        key = (_stat_key(self.paths.index), _stat_key(self.paths.events), listing)
        if self._recall_cache is not None and self._recall_cache[0] == key:
            return self._recall_cache[1]
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
        self._recall_cache = (key, index)
        return index

    def _active_recall_index(self) -> tuple[tuple[Any, ...], RecallIndex]:
        paths = self.paths
        key = (_stat_key(paths.index), _stat_key(paths.chunks_dir))
        cached = self._recall_active
        if cached is not None and cached[0] == key:
            return cached
        docs: dict[str, tuple[Any, AnalyzedDoc]] = {}
        for entry in read_index(paths).entries:
            cid = entry.chunk_id
            try:
                file_key: Any = _stat_key(paths.chunk_file(cid))
            except SessionMemoryError:
                file_key = None
            old = self._recall_docs.get(cid)
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
        self._recall_active = (key, index)
        self._recall_docs = docs
        return key, index

    def status(self) -> SessionStatus:
        warnings: list[str] = []
        snap = self.store.read_events()
        state = None
        if self.paths.state.exists():
            state = self.store.read_state()
        index_error = None
        chunk_count = 0
        try:
            read = read_catalog(self.paths)
            chunk_count = len(read)
            warnings.extend(read.warnings)
            not_regular: set[str] = set()
            on_disk = chunk_file_names(self.paths, not_regular)
            for chunk_id in read.chunk_ids():
                if chunk_id in not_regular:
                    warnings.append(
                        f"{self.paths.chunk_file(chunk_id)}: not a regular file; "
                        "its events cannot be recalled"
                    )
                elif chunk_id not in on_disk:
                    chunk_file = self.paths.chunk_file(chunk_id)
                    warnings.append(
                        f"{chunk_file}: listed in {self.paths.index} but missing; "
                        "its events cannot be recalled"
                    )
        except IndexCorruptError as exc:
            index_error = str(exc)
        try:
            pending_count = len(list_pending(self.paths))
        except SessionMemoryError as exc:
            warnings.append(str(exc))
            pending_count = 0
        model = self.model or (state.model if state else None)
        last_prompt = state.last_prompt_tokens if state else None
        size = (state or _NO_STATE).prompt_size([e.get("id") for e in snap.events], snap.tokens)
        decision = trigger_for(state or _NO_STATE, snap.events, snap.tokens, self.config, model)
        warnings.extend(getattr(self.store, "warnings", []))
        return SessionStatus(
            memory_dir=self.memory_dir,
            session_id=state.session_id if state else None,
            event_count=snap.event_count,
            hot_tokens=sum(snap.tokens),
            last_prompt_tokens=last_prompt,
            prompt_tokens=size.tokens,
            prompt_tokens_source=size.source,
            prompt_tokens_appended=size.appended,
            context_window=self.config.window_for(model),
            model=model,
            should_compress=decision.should_compress,
            trigger=decision.trigger,
            trigger_reason=decision.reason,
            chunk_count=chunk_count,
            pending_count=pending_count,
            corrupt_lines=len(snap.corrupt) + self.store.count_corrupt_quarantined(),
            has_compressed_history=chunk_count > 0,
            archives=self.list_archives(),
            index_error=index_error,
            warnings=warnings,
        )

    def list_archives(self) -> list[ArchiveInfo]:
        root = self.paths.archive_root
        if not root.is_dir():
            return []
        out: list[ArchiveInfo] = []
        for child in sorted(root.iterdir()):
            if not child.is_dir() or child.is_symlink():
                continue
            try:
                store = SessionStore(self.memory_dir, session=child)
                event_count = _archive_event_count(store)
                try:
                    chunk_count = len(read_catalog(store.paths, write=False))
                except IndexCorruptError:
                    chunk_count = 0
                created = store.read_state().created_at if store.paths.state.exists() else None
            except SessionMemoryError:
                continue
            size = _tree_size(child)
            out.append(
                ArchiveInfo(
                    session_id=child.name,
                    path=child,
                    event_count=event_count,
                    chunk_count=chunk_count,
                    created_at=created,
                    size_bytes=size,
                )
            )
        return out

    def close(self) -> None:
        """Wait for the background pass (if any) to finish; sync what was appended (a CLI
        append is durable once it exits, with durability `run`)."""
        self.wait_for_maintenance()
        self.store.settle_appends()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _archive_event_count(store: SessionStore) -> int:
    """The events in an archive's events.jsonl, as `read_events` counts them, without the
    token estimates and digest a snapshot carries (status lists a hundred archives)."""
    store.paths.ensure_inside_root()
    path = store.paths.events
    try:
        fd = open_no_symlink(path, os.O_RDONLY)
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as fh:
        data = fh.read()
    return len(parse_event_lines(data, final=False).events)


def _tree_size(folder: Path) -> int:
    """Bytes of the files under `folder` (one stat per file, no Path objects: an archive of
    10,000 chunks is listed in a few tens of milliseconds)."""
    total = 0
    stack = [str(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as listing:
                for entry in listing:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        elif entry.is_file():
                            total += entry.stat().st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return total


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
