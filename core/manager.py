"""MemoryManager: the API an agent runtime uses (design: Flow; contract §5, §8–§11).

Appends go straight to the store under the session lock; maintenance runs on a background
thread, coalesced by a pending flag, so a turn's commit never waits for a summarizer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.compaction.prompt import build_prompt_messages
from core.config import CompactionConfig, load_config
from core.errors import IndexCorruptError, SessionMemoryError, StoreError
from core.events import Event, make_event
from core.index.catalog import read_catalog
from core.status import (
    ArchiveInfo,
    PlanReport,
    SessionStatus,
    list_archives,
    plan_report,
    session_status,
)
from core.store.atomic import read_bytes_no_symlink
from core.store.ledger import PromptLedger, record_measured
from core.store.reader import EventTail
from core.store.session_store import SessionStore
from core.summarizer import Summarizer, make_summarizer

if TYPE_CHECKING:
    from core.maintenance.compaction_pass import PassResult
    from core.maintenance.rotation import RotationResult
    from core.recall.ranking import RecallResult
    from core.recall.service import RecallService


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
        self._queued: list[Future[PassResult | None]] = []
        self._thread: threading.Thread | None = None
        self._hot_lock = threading.Lock()
        self._hot_tail = EventTail(self.paths.events, tokens=False)
        self._hot_cache: list[Event] = []
        self._recall_service: RecallService | None = None
        self.ledger = PromptLedger(self.paths)
        """Writes session/prompts.jsonl: a line per build_prompt, measured figure and pass."""

    @property
    def recall_service(self) -> RecallService:
        """Made on first use: recall's modules (SQLite, the ranking) are imported only by a
        process that recalls or indexes, not by every `status` or `prompt`."""
        if self._recall_service is None:
            from core.recall.service import RecallService

            self._recall_service = RecallService(
                self.store, self.memory_dir, read_only=self.read_only, hot_events=self._hot_events
            )
        return self._recall_service

    @property
    def persistent_recall(self) -> bool:
        """Search through chunks/recall.sqlite (False: the in-memory index, the baseline)."""
        return self.recall_service.persistent

    @persistent_recall.setter
    def persistent_recall(self, value: bool) -> None:
        self.recall_service.persistent = value

    @property
    def recall_warnings(self) -> list[str]:
        """Why recall fell back to the in-memory index or rebuilt its file (newest last)."""
        return self.recall_service.warnings

    @property
    def last_recall_index_ms(self) -> float | None:
        """Time the last pass's hook spent adding its chunk to chunks/recall.sqlite."""
        return self.recall_service.last_index_ms

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

    def record_prompt_tokens(
        self, n: int, model: str | None = None, *, after_event_id: str | None = None
    ) -> None:
        """Record the provider's prompt size of the latest model call; the trigger adds what is
        appended after it by estimate (contract §5). `after_event_id`: the figure's call came
        after that stored event, not after the last one (see SessionStore)."""
        self._writable()
        state = self.store.record_prompt_tokens(
            int(n), model=model or self.model, after_event_id=after_event_id
        )
        try:
            record_measured(
                self.paths,
                int(n),
                model=model or self.model,
                after_event_id=state.prompt_tokens_after_event_id,
            )
        except (OSError, SessionMemoryError) as exc:
            self.store.warnings.append(f"the prompt ledger was not written: {exc}")

    def commit_run(self, assistant_text: str, **fields: Any) -> Event:
        event = self.append(make_event("assistant_output", assistant_text, **fields))
        self.store.settle_appends()  # durability `run`: the run is on disk once committed
        self.request_maintenance()
        return event

    # -- maintenance passes (design: RequestMaintenance, Save) -----------------------------

    def request_maintenance(self) -> Future[PassResult | None]:
        """Schedule a pass on a background thread and return at once; a request while one
        runs is served by exactly one more pass after it (requests coalesce).

        The Future resolves with the result of the pass that serves this request (never an
        earlier one that was already running), raises that pass's error, or gives None at once
        for a read-only manager, which runs no pass."""
        future: Future[PassResult | None] = Future()
        if self.read_only:
            future.set_result(None)
            return future
        with self._cond:
            self._queued.append(future)
            if self._running:
                return future
            self._running = True
        self._thread = threading.Thread(
            target=self._pass_loop, name="session-maintenance", daemon=True
        )
        self._thread.start()
        return future

    def _pass_loop(self) -> None:
        while True:
            with self._cond:
                serving, self._queued = self._queued, []
            try:
                result = self._run_pass()
            except Exception as exc:  # the thread must survive: reported via telemetry
                self.telemetry.errors += 1
                self.telemetry.last_error = f"{type(exc).__name__}: {exc}"
                for future in serving:
                    future.set_exception(exc)
            else:
                for future in serving:
                    future.set_result(result)
            with self._cond:
                if self._queued:
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

    def _run_pass(
        self,
        *,
        force: bool = False,
        focus: str | None = None,
        prompt_tokens: int | None = None,
        config: CompactionConfig | None = None,
    ) -> PassResult:
        """One pass, counted in telemetry; a pass that added a chunk adds it to recall's file,
        and `on_pass` sees every result."""
        from core.maintenance.compaction_pass import (
            run_pass,  # the pass's modules: not for status or prompt
        )

        result = run_pass(
            self.store,
            config or self.config,
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
            self.recall_service.index_new_chunks()
        if result.compacted or (result.trigger is not None and result.trigger.should_compress):
            from core.timeline import record_pass

            try:
                record_pass(self.store, self.ledger, result)
            except (OSError, SessionMemoryError) as exc:
                self.store.warnings.append(f"the prompt ledger was not written: {exc}")
        if self.on_pass is not None:
            self.on_pass(result)
        return result

    def save(
        self,
        *,
        force: bool = False,
        focus: str | None = None,
        prompt_tokens: int | None = None,
        config: CompactionConfig | None = None,
    ) -> PassResult:
        """Run one maintenance pass synchronously (design: MemoryManager.Save). `config`: a
        one-off config for this pass alone (the TUI's what-if values); never saved."""
        self._writable()
        return self._run_pass(force=force, focus=focus, prompt_tokens=prompt_tokens, config=config)

    def session_model(self) -> str | None:
        """The model the session is for: this manager's, else the one state.json recorded
        (None: neither, and the config's default window applies). Reads state.json."""
        if self.model is None and self.paths.state.exists():
            return self.store.read_state().model
        return self.model

    def plan(
        self,
        *,
        prompt_tokens: int | None = None,
        model: str | None = None,
        config: CompactionConfig | None = None,
    ) -> PlanReport:
        """What a pass would do now; changes nothing."""
        return plan_report(
            self.store,
            config or self.config,
            model=model or self.model,
            prompt_tokens=prompt_tokens,
        )

    def rotate(self) -> RotationResult:
        from core.maintenance.rotation import rotate

        self._writable()
        with self.recall_service.lock:
            self.recall_service.close_files()  # before the rename: SQLite removes its WAL by path
            result = rotate(self.store, self.config)
        self.recall_service.forget()
        return result

    def repair(self) -> dict[str, int]:
        """Finish or undo crashed passes, rebuild an unreadable index from the chunk files,
        and quarantine corrupt lines of events.jsonl (contract §6, §8;
        core.maintenance.recovery.repair),
        then rebuild recall's index."""
        from core.maintenance import recovery

        self._writable()
        repaired = recovery.repair(self.store, self.config)
        self.recall_service.forget()
        if self.persistent_recall and self.recall_service.rebuild_file():
            repaired["recall_index_rebuilt"] = 1
        return repaired

    # -- reading ---------------------------------------------------------------------------

    def has_compressed_history(self) -> bool:
        """True when the active session has indexed chunks (archives never count); read
        through the catalog, so a prompt does not parse a 10,000-chunk index."""
        return self._history()[0] > 0

    def _history(self) -> tuple[int, str | None]:
        """(indexed chunks, the last one's id) of the active session, through the catalog;
        with an unreadable index, whether summary.md holds something (1 or 0) and None."""
        try:
            catalog = read_catalog(self.paths, write=not self.read_only)
        except IndexCorruptError:
            has = self.paths.summary.exists() and self.paths.summary.stat().st_size > 0
            return (1 if has else 0), None
        count = len(catalog)
        return count, (catalog.entries.chunk_id(count - 1) if count else None)

    def build_prompt(
        self, system_prompt: str, task: str, *, record: bool = True
    ) -> list[dict[str, Any]]:
        """The messages a model gets for `task` now (contract §11). A writable manager also
        appends the call to the prompt ledger (session/prompts.jsonl) unless `record` is
        False (a preview, such as the TUI's Prompt tab); a ledger that cannot be written is a
        warning in `store.warnings`, never an error of the prompt."""
        summary_md, chunk_count, last_chunk = self._summary_now()
        hot = self._hot_events()
        messages = build_prompt_messages(system_prompt, summary_md, hot, task)
        if record and not self.read_only:
            self._ledger_call(
                system_prompt, summary_md, hot, task, chunk_count, last_chunk, len(messages)
            )
        return messages

    def _summary_now(self) -> tuple[str | None, int, str | None]:
        """(summary.md when there is compressed history, chunk count, last chunk id)."""
        chunk_count, last_chunk = self._history()
        if chunk_count == 0 or not self.paths.summary.exists():
            return None, chunk_count, last_chunk
        try:
            data = read_bytes_no_symlink(self.paths.summary)
        except OSError as exc:
            raise StoreError(f"cannot read {self.paths.summary}: {exc.strerror or exc}") from exc
        return data.decode("utf-8", errors="replace"), chunk_count, last_chunk

    def _ledger_call(
        self,
        system_prompt: str,
        summary_md: str | None,
        hot: list[Event],
        task: str,
        chunk_count: int,
        last_chunk: str | None,
        message_count: int,
    ) -> None:
        try:
            self.ledger.record_call(
                system_prompt,
                summary_md,
                hot,
                task,
                model=self.model,
                chunk_count=chunk_count,
                last_chunk_id=last_chunk,
                message_count=message_count,
            )
        except (OSError, SessionMemoryError) as exc:
            self.store.warnings.append(f"the prompt ledger was not written: {exc}")

    def record_call(self, system_prompt: str, task: str, hot_events: list[Event]) -> None:
        """Append a prompt-ledger line for a model call whose hot window was `hot_events`
        with the summary.md of now (an import's calls: no pass ran between them)."""
        self._writable()
        summary_md, chunk_count, last_chunk = self._summary_now()
        count = len(build_prompt_messages(system_prompt, summary_md, hot_events, task))
        self._ledger_call(
            system_prompt, summary_md, hot_events, task, chunk_count, last_chunk, count
        )

    def hot_events(self) -> list[Event]:
        """The hot window's events now (what the next prompt holds)."""
        return self._hot_events()

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
        result = self.recall_service.recall(query, limit, all_sessions)
        self.telemetry.pending_chunks_recalled += result.pending_chunks_recalled
        return result

    def status(self) -> SessionStatus:
        return session_status(
            self.store,
            self.config,
            memory_dir=self.memory_dir,
            model=self.model,
            write_catalog=not self.read_only,
        )

    def list_archives(self) -> list[ArchiveInfo]:
        return list_archives(self.memory_dir, self.paths)

    def close(self) -> None:
        """Wait for the background pass (if any) to finish; sync what was appended (a CLI
        append is durable once it exits, with durability `run`)."""
        self.wait_for_maintenance()
        self.store.settle_appends()
        self.ledger.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
