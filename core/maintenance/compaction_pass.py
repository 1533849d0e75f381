"""The two-phase maintenance pass (design: Flow, Concurrency; contract §8); its crash
recovery is core/maintenance/recovery.py.

A pass holds the session lock only to pin a snapshot, to publish its pending evidence and to
commit; reading, planning, summarising and writing the new files run without it, so appends
never wait for a summarizer or for the bulk of the I/O. Under the lock the pass only opens
events.jsonl at its current size (`SessionStore.pin_events`); it parses those bytes after
releasing it. Every file it will publish is written and fsynced beforehand as a temporary file
beside its target (it holds the maintenance slot, so no other pass or repair writes them), and
the commit is a series of renames plus the few events appended meanwhile: the prefix check
is O(1) (the pinned inode and a digest of the snapshot's end), and the chunk file is a hard link
of the pending evidence, not a second copy. Before the commit the pass checks that events.jsonl
still begins with its snapshot (else it abandons); events appended meanwhile are carried over
after the retained hot window.

The pass is a `CompactionPass` whose steps read in order: `pin_snapshot` (recovery, state.json,
events.jsonl pinned), `prepare` (trigger, headroom and plan on the snapshot; nothing written),
`write_pending` (the evidence), `compact` (summarise, then the pure `build_commit`) and
`append` (the commit). A step that ends the pass early raises `_Stop`, which `run` turns into
the skipped or abandoned result; a `Stopwatch` times each step for `PassResult.timings_ms`.

Crash safety: the pending evidence (`chunks/pending/<id>.jsonl` + `.meta.json`) is written
before events.jsonl loses anything, and its sidecar records the chunk id and summary before
the replace, so `recover` can always finish a pass that died half way — or drop evidence whose
events are all still in the hot window.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.compaction.commit_plan import (
    ArchiveFacts,
    ChunkSummaries,
    CommitInputs,
    CommitPlan,
    build_commit,
    can_append,
)
from core.compaction.headroom import Headroom, headroom_for, pushed_out_summary
from core.compaction.planner import CompactionPlan, plan_compaction, resolve_turn_start_chunk
from core.compaction.state import SessionState
from core.compaction.stopwatch import Stopwatch
from core.compaction.summaries import (
    ARCHIVE_TITLE,
    render_entry,
)
from core.compaction.trigger import TriggerDecision, trigger_for
from core.config import CompactionConfig
from core.errors import IndexCorruptError, SessionMemoryError, StoreError
from core.events import Event, new_event_id, now_ts
from core.index.catalog import Catalog, append_index_entry, read_catalog
from core.index.chunk_files import write_chunk_file
from core.index.format import next_chunk_id
from core.index.pending import delete_pending, new_pending_id, pending_meta_bytes
from core.jsonl import stored_events_bytes
from core.maintenance.recovery import maintenance_slot as maintenance_slot
from core.maintenance.recovery import recover_locked
from core.store.atomic import (
    append_synced,
    fsync_dir,
    open_no_symlink,
    publish,
    stage_bytes,
)
from core.store.faults import fault_point
from core.store.paths import MemoryPaths
from core.store.session_store import SessionStore
from core.store.snapshot import EventsSnapshot
from core.summarizer import (
    Summarizer,
    SummaryKind,
    continued_turn_prefix,
    split_turn_overhead_tokens,
    split_turn_summary,
    summarize_with_fallback,
)
from core.tokens import estimate_tokens


@dataclass
class PassResult:
    """What one pass did, and why; the CLI prints it and the TUI logs it."""

    compacted: bool
    reason: str | None = None
    chunk_id: str | None = None
    kept_event_count: int = 0
    events_before: int = 0
    compacted_event_count: int = 0
    carried_over_count: int = 0
    quarantined_count: int = 0
    summary_backend: str | None = None
    is_split_turn: bool = False
    abandoned: bool = False
    plan: CompactionPlan | None = None
    trigger: TriggerDecision | None = None
    recovered: dict[str, int] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "compacted": self.compacted,
            "chunk_id": self.chunk_id,
            "reason": self.reason,
            "kept_event_count": self.kept_event_count,
            "events_before": self.events_before,
            "compacted_event_count": self.compacted_event_count,
            "carried_over_count": self.carried_over_count,
            "quarantined_count": self.quarantined_count,
            "summary_backend": self.summary_backend,
            "is_split_turn": self.is_split_turn,
            "abandoned": self.abandoned,
            "path": self.plan.path if self.plan else None,
            "trigger": self.trigger.trigger if self.trigger else None,
            "recovered": dict(self.recovered),
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }


def run_pass(
    store: SessionStore,
    config: CompactionConfig,
    summarizer: Summarizer,
    *,
    force: bool = False,
    prompt_tokens: int | None = None,
    model: str | None = None,
    focus: str | None = None,
) -> PassResult:
    """One maintenance pass. Returns at once with reason "busy" if another pass is running."""
    with maintenance_slot(store) as free:
        if not free:
            return PassResult(compacted=False, reason="busy")
        options = PassOptions(force=force, prompt_tokens=prompt_tokens, model=model, focus=focus)
        return CompactionPass(store, config, summarizer, options).run()


@dataclass(frozen=True)
class PassOptions:
    """How a pass was asked for: `force` skips the trigger (and the would-it-shrink check),
    `prompt_tokens` is the caller's measured figure, `model` picks the context window and
    `focus` steers this pass's summaries (never stored)."""

    force: bool = False
    prompt_tokens: int | None = None
    model: str | None = None
    focus: str | None = None


@dataclass(frozen=True)
class Preparation:
    """What the pass decided on its pinned snapshot before writing anything: the index as it
    read it (and index.yaml's stat, checked again at commit), the trigger, the headroom and
    the plan (useful, with a cut)."""

    snap: EventsSnapshot
    catalog: Catalog
    index_key: tuple[int, int, int, int] | None
    decision: TriggerDecision
    headroom: Headroom
    plan: CompactionPlan


@dataclass(frozen=True)
class _Pending:
    """The pass's published pending evidence (`chunks/pending/<id>.jsonl` and its sidecar)."""

    pending_id: str
    path: Path
    meta_path: Path
    meta: dict[str, Any]


class _Stop(Exception):
    """The pass ends early: skipped (nothing written, `kept_event_count` is the snapshot's) or
    abandoned (the session moved under it; its own evidence is gone)."""

    def __init__(self, reason: str, *, abandoned: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.abandoned = abandoned


_ROTATED = "abandoned: the session was rotated during the pass"


class CompactionPass:
    """One pass, holding the maintenance slot: pin a snapshot, then prepare → write the
    pending evidence → compact (summarise, `build_commit`) → append (the commit). Each step
    times itself on `clock`; the fault points sit where the crash tests expect them."""

    state: SessionState
    """The session the pass started on (read when it pins its snapshot): a pass whose
    session is no longer the active one abandons."""

    def __init__(
        self,
        store: SessionStore,
        config: CompactionConfig,
        summarizer: Summarizer,
        options: PassOptions,
    ) -> None:
        self.store = store
        self.paths = store.paths
        self.config = config
        self.summarizer = summarizer
        self.options = options
        self.clock = Stopwatch()
        self.result = PassResult(compacted=False, timings_ms=self.clock.timings)

    def run(self) -> PassResult:
        snap = self.pin_snapshot()
        try:
            try:
                prep = self.prepare(snap)
                pending = self.write_pending(prep)
                commit = self.compact(prep, pending)
                self.append(prep, pending, commit)
            except _Stop as stop:
                self.result.reason = stop.reason
                self.result.abandoned = stop.abandoned
                if not stop.abandoned:
                    self.result.kept_event_count = snap.event_count
            self.clock.total()
            return self.result
        finally:
            snap.close()

    def pin_snapshot(self) -> EventsSnapshot:
        """Under a short lock: recover what a crashed pass left, read state.json and pin
        events.jsonl at its size; read the pinned bytes after it (ids made unique first)."""
        store = self.store
        with store.lock():
            store.ensure_session()
            recovered = recover_locked(store, self.config, thorough=False)
            self.state = store.read_state()
            pin = store.pin_events()
        self.result.recovered = recovered
        self.clock.lap("lock_read")
        snap = store.read_pinned(pin) if pin is not None else None
        if snap is None or normalize_ids(snap.events):
            if snap is not None:
                snap.close()
            with store.lock():
                fixed = store.read_events(locked=True)
                if normalize_ids(fixed.events):
                    store.replace_events(fixed.events, quarantine=fixed.corrupt)
                    recovered["ids_assigned"] = recovered.get("ids_assigned", 0) + 1
                pin = store.pin_events()
            if pin is None:
                raise StoreError(f"{self.paths.events} vanished during the pass")
            snap = store.read_pinned(pin)
        return snap

    def prepare(self, snap: EventsSnapshot) -> Preparation:
        """Read the index, ask the trigger, plan the cut with the headroom it leaves; writes
        nothing. Stops when no pass is needed, no cut is useful or it would not shrink the
        prompt."""
        options, result = self.options, self.result
        index_key = _stat_key(self.paths.index)
        catalog = read_catalog(self.paths)
        self.clock.lap("read")
        decision = trigger_for(
            self.state, snap.events, snap.tokens, self.config, options.model, options.prompt_tokens
        )
        result.events_before = snap.event_count
        result.trigger = decision
        if not options.force and not decision.should_compress:
            raise _Stop(f"not needed: {decision.reason}")
        headroom = headroom_for(
            self.state,
            self.config,
            options.model,
            self.store.summary_estimate(),
            pushed_out_summary(len(catalog), catalog.summary, self.config.summary_max_chunks),
        )
        plan = plan_compaction(snap.events, self.config, tokens=snap.tokens, headroom=headroom)
        plan = resolve_turn_start_chunk(plan, catalog.entry_extra)
        result.plan = plan
        self.clock.lap("plan")
        if not plan.useful or plan.cut_index is None:
            raise _Stop(f"no useful cut: {plan.reason}")
        before = _grows(decision, plan.predicted_after_tokens, options.force)
        if before is not None:
            raise _Stop(_not_smaller(plan.predicted_after_tokens, before))
        return Preparation(snap, catalog, index_key, decision, headroom, plan)

    def write_pending(self, prep: Preparation) -> _Pending:
        """Write the compacted events and the in-flight sidecar beside their targets unlocked,
        then publish both under a short lock hold (the crash-safe point: from here recovery
        can finish or undo the pass)."""
        store, snap, plan = self.store, prep.snap, prep.plan
        paths = self.paths
        pending_id = new_pending_id()
        meta: dict[str, Any] = {
            "session_id": self.state.session_id,
            "created_at": now_ts(),
            "state": "in_flight",
            "snapshot_size": snap.size,
            "path": plan.path,
            "trigger": prep.decision.trigger,
        }
        self.clock.restart()
        pending = _Pending(
            pending_id, paths.pending_file(pending_id), paths.pending_meta_file(pending_id), meta
        )
        paths.ensure_inside_root(paths.pending_dir)
        paths.pending_dir.mkdir(parents=True, exist_ok=True)
        staged: list[Path] = []
        try:
            evidence = snap.lines_of(plan.compacted_indices())
            if evidence is None:
                compacted = [snap.events[i] for i in plan.compacted_indices()]
                evidence = stored_events_bytes(compacted, f"pending {pending_id} event")
            staged.append(stage_bytes(pending.path, evidence))
            staged.append(
                stage_bytes(pending.meta_path, pending_meta_bytes(meta, pending.meta_path))
            )
        except StoreError:
            _discard(staged)
            self._abandon_if_rotated()
            raise
        self.clock.lap("stage_pending")
        with store.lock():
            if store.read_state().session_id != self.state.session_id:
                _discard(staged)
                raise _Stop(_ROTATED, abandoned=True)
            try:
                publish(staged[0], pending.path)
                fault_point("between_pending_writes")
                publish(staged[1], pending.meta_path)
            except BaseException:
                _discard(staged)
                raise
        self.clock.lap("lock_pending")
        fsync_dir(paths.pending_dir)
        fault_point("after_pending_write")
        return pending

    def compact(self, prep: Preparation, pending: _Pending) -> CommitPlan:
        """Summarise the compacted events and build the commit (pure, core.compaction.commit_plan).
        The summaries known, a token-triggered pass that would not shrink the prompt is dropped with
        its evidence (contract §5)."""
        # The catalog reads old summaries out of index.yaml only when they are needed, and a
        # rotation does not wait for this pass: once it has moved the session those reads
        # fail (or find the new session's index), and the pass abandons as at its commit.
        catalog, index_key = prep.catalog, prep.index_key
        try:
            self.clock.restart()
            summaries = self.summarise(prep)
            self.clock.lap("summarize")
            fault_point("after_summarize")
            self.clock.restart()
            index_size = index_key[2] if index_key is not None else 0
            appending = can_append(catalog, index_size)
            inputs = CommitInputs(
                plan=prep.plan,
                snapshot=prep.snap,
                summaries=summaries,
                index=catalog,
                index_size=index_size,
                archive=_archive_facts(self.paths, catalog, self.config, appending),
                chunk_id=_free_chunk_id(self.paths, catalog),
                pending_meta=pending.meta,
                trigger=prep.decision.trigger,
            )
            commit = build_commit(inputs, self.config)
        except (StoreError, IndexCorruptError):
            self._abandon_if_rotated()
            raise
        predicted = prep.headroom.calibration.predict(commit.prompt_estimate(()))
        before = _grows(prep.decision, predicted, self.options.force)
        if before is not None:
            with self.store.lock():
                delete_pending(self.paths, pending.pending_id)
            raise _Stop(_not_smaller(predicted, before))
        return commit

    def summarise(self, prep: Preparation) -> ChunkSummaries:
        """Summarise the compacted events, falling back to extractive. The latest chunk's
        summary is the checkpoint a summarizer updates (older chunks live on in the Rolling
        Summary); the pass's `focus` steers its summaries and is never stored."""
        summarizer, config, focus = self.summarizer, self.config, self.options.focus
        events, plan, catalog = prep.snap.events, prep.plan, prep.catalog
        previous = catalog.summary(-1) if len(catalog) else None
        max_summary = config.summarizer.max_summary_tokens
        backends: list[str] = []

        def summarize(part: list[Event], kind: SummaryKind, budget: int) -> str:
            text, used = summarize_with_fallback(
                summarizer,
                part,
                kind=kind,
                previous_summary=previous,
                focus=focus,
                max_tokens=budget,
                redact=config.redact_secrets,
            )
            backends.append(used)
            return text

        prefix_text: str | None = None
        if plan.is_split_turn:
            # History and prefix share one budget (contract §5: the chunk summary as a whole fits
            # max_summary_tokens): the prefix gets two fifths, the history what the prefix left.
            history_events = [events[i] for i in plan.history_indices()]
            framing = split_turn_overhead_tokens()
            room = max(2, max_summary - framing)
            prefix_budget = room * 2 // 5 if history_events else room
            prefix_text = summarize(
                [events[i] for i in plan.prefix_indices()], "turn_prefix", max(1, prefix_budget)
            )
            history_budget = room - estimate_tokens(prefix_text)
            history_text = (
                summarize(history_events, "history", history_budget)
                if history_events and history_budget > 0
                else ""
            )
            # A continued turn's request is named by the chunk that compacted its user_input
            # and by the synthetic event; this chunk points back instead (contract §5).
            chunk_prefix = (
                continued_turn_prefix(prefix_text) if plan.turn_continued else prefix_text
            )
            chunk_summary = split_turn_summary(history_text, chunk_prefix)
        else:
            chunk_summary = summarize(
                [events[i] for i in plan.compacted_indices()], "history", max_summary
            )
        backend = next((b for b in backends if b.endswith("fallback")), backends[0])
        return ChunkSummaries(chunk_summary, prefix_text, backend)

    def append(self, prep: Preparation, pending: _Pending, commit: CommitPlan) -> None:
        """The commit: stage every file it publishes, publish them under the lock, make the
        renames durable, then delete the evidence; the result says what was done."""
        stage = self._stage_commit(pending, commit)
        self.clock.lap("stage_commit")
        carried, quarantined, folders = self._publish(prep, pending, commit, stage)
        self.clock.lap("lock_write")
        # The renames above must be durable before the evidence goes; the folders are fsynced
        # through descriptors taken under the lock (the right folders even after a rotation),
        # so these fsyncs do not hold appends up.
        try:
            for fd in folders:
                os.fsync(fd)
        finally:
            for fd in folders:
                os.close(fd)
        self.clock.restart()
        with self.store.lock():
            if not _rotated(self.store, self.state):
                delete_pending(self.paths, pending.pending_id, durable=False)
        self.clock.lap("lock_cleanup")
        result = self.result
        result.compacted = True
        result.chunk_id = commit.chunk_id
        result.kept_event_count = commit.kept_count(carried)
        result.compacted_event_count = len(commit.compacted)
        result.carried_over_count = len(carried)
        result.quarantined_count = quarantined
        result.summary_backend = commit.entry.extra.get("summary_backend")
        result.is_split_turn = commit.synthetic_event is not None

    def _stage_commit(self, pending: _Pending, commit: CommitPlan) -> dict[str, Path]:
        """Write the sidecar (now `committing`), events.jsonl, the index and the summaries as
        temporary files beside their targets, unlocked. Abandons (the evidence deleted) when
        the session was rotated meanwhile."""
        paths = self.paths
        paths.ensure_inside_root(paths.chunks_dir)
        stage: dict[str, Path] = {}
        try:
            meta = pending_meta_bytes(commit.pending_meta, pending.meta_path)
            stage["meta"] = stage_bytes(pending.meta_path, meta)
            stage["events"] = stage_bytes(paths.events, commit.hot_window)
            if commit.index_text is not None:
                stage["index"] = stage_bytes(paths.index, commit.index_text)
            stage["summary"] = stage_bytes(paths.summary, commit.summary_md.encode("utf-8"))
            if commit.archive is not None:
                stage["archive"] = stage_bytes(paths.summary_archive, commit.archive)
        except StoreError:
            _discard(list(stage.values()))
            if not _rotated(self.store, self.state):
                raise
            with self.store.lock():
                delete_pending(paths, pending.pending_id)
            raise _Stop(_ROTATED, abandoned=True) from None
        except BaseException:
            _discard(list(stage.values()))
            raise
        return stage

    def _publish(
        self, prep: Preparation, pending: _Pending, commit: CommitPlan, stage: dict[str, Path]
    ) -> tuple[list[Event], int, list[int]]:
        """Under the session lock: check the pass still holds, then rename (or append) each
        file in the order recovery relies on, a fault point after each. Returns the events
        appended during the pass (carried over), how many lines were quarantined and
        descriptors of the folders to fsync; abandons when the pass no longer holds."""
        store, paths, snap = self.store, self.paths, prep.snap
        with store.lock(), _discarding(stage):
            appended = self._still_holds(prep)
            if isinstance(appended, str):  # `_discarding` removes what was staged
                delete_pending(paths, pending.pending_id)
                raise _Stop(appended, abandoned=True)
            tail = store.parse_event_lines(
                appended, base_offset=snap.size, base_line=snap.next_line, final=True
            )
            publish(stage.pop("meta"), pending.meta_path)
            fault_point("after_pending_commit")
            if tail.events:
                # Fsynced: these events may have been synced where they came from (durability
                # `always`, or a flush), and that file is about to be replaced.
                append_synced(stage["events"], stored_events_bytes(tail.events, "appended event"))
            store.quarantine([*snap.corrupt, *tail.corrupt])
            publish(stage.pop("events"), paths.events)
            fault_point("after_events_replace")
            _publish_outputs(paths, prep.catalog, pending, commit, stage)
            _after_compaction_state(
                store,
                commit.prompt_estimate(tail.events),
                commit.anchor_event_id(tail.events),
                prep.headroom.window,
                sync_folder=False,
            )
            fault_point("after_state_write")
            folders = [
                os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                for folder in (paths.session, paths.chunks_dir)
            ]
        return tail.events, len(snap.corrupt) + len(tail.corrupt), folders

    def _still_holds(self, prep: Preparation) -> str | bytes:
        """Under the lock at commit: why the pass must give up (a str), else the bytes
        appended to events.jsonl since the snapshot."""
        paths = self.paths
        current = self.store.read_state()
        if current.session_id != self.state.session_id or not paths.events.exists():
            return _ROTATED
        still, appended = self.store.snapshot_still_prefix(prep.snap)
        if not still:
            return "abandoned: events.jsonl was rewritten by another process"
        if _stat_key(paths.index) != prep.index_key:
            # Not expected (only the holder of the maintenance slot writes the index): the
            # summaries were rendered from another index; nothing is cut yet, so give up.
            return "abandoned: index.yaml changed during the pass"
        return appended

    def _abandon_if_rotated(self) -> None:
        """After a read or write failed: abandon when the session was rotated meanwhile (the
        failure is the rotation's doing); otherwise the caller re-raises the failure."""
        if _rotated(self.store, self.state):
            raise _Stop(_ROTATED, abandoned=True) from None


def _publish_outputs(
    paths: MemoryPaths,
    catalog: Catalog,
    pending: _Pending,
    commit: CommitPlan,
    stage: dict[str, Path],
) -> None:
    """The chunk file (a link of the evidence), the index entry and the summaries, in the
    order recovery relies on, a fault point after each (the caller holds the lock)."""
    _link_chunk(paths, pending.path, commit.chunk_id, commit.compacted)
    fault_point("after_chunk_write")
    if "index" in stage:
        publish(stage.pop("index"), paths.index)
    else:
        append_index_entry(paths, catalog, commit.entry)
    fault_point("after_index_write")
    publish(stage.pop("summary"), paths.summary)
    fault_point("between_summary_writes")
    if "archive" in stage:
        publish(stage.pop("archive"), paths.summary_archive)
    elif commit.archive_append is not None:
        append_synced(paths.summary_archive, commit.archive_append)
    fault_point("after_summaries_write")


def _grows(decision: TriggerDecision, predicted: int | None, force: bool) -> int | None:
    """The prompt before, when a token-triggered pass would not make it smaller (predicted
    after ≥ before); None when the pass may go on (contract §5, Headroom)."""
    before = decision.prompt_tokens
    if force or decision.trigger != "tokens" or before is None or predicted is None:
        return None
    return before if predicted >= before else None


def _not_smaller(predicted: int | None, before: int) -> str:
    added = (predicted or 0) - before
    effect = (
        f"it would grow the prompt by {added:,} tokens" if added > 0 else "it would not shrink it"
    )
    return (
        "not committed: the prompt after the pass would not be smaller than before "
        f"(predicted {predicted:,} tokens after it, {before:,} before; {effect})"
    )


def _free_chunk_id(paths: MemoryPaths, catalog: Catalog) -> str:
    """The next chunk id after the index's, past any chunk file no entry lists (repair's)."""
    chunk_id = catalog.next_chunk_id()
    while paths.chunk_file(chunk_id).exists():
        chunk_id = next_chunk_id([chunk_id])
    return chunk_id


def _archive_facts(
    paths: MemoryPaths, catalog: Catalog, config: CompactionConfig, appending: bool
) -> ArchiveFacts:
    """What build_commit needs to know of summary_archive.md, probed only where it decides."""
    if not appending:
        return ArchiveFacts(exists=paths.summary_archive.exists())
    split = len(catalog) + 1 - config.summary_max_chunks
    if split <= 0:
        return ArchiveFacts(nonempty=_nonempty(paths.summary_archive))
    if split == 1:
        return ArchiveFacts()
    return ArchiveFacts(holds_before_pushed=_archive_ends_with(paths, catalog, split - 2))


def _nonempty(path: Path) -> bool:
    try:
        return os.stat(path, follow_symlinks=False).st_size > 0
    except OSError:
        return False


def _archive_ends_with(paths: MemoryPaths, catalog: Catalog, last: int) -> bool:
    """Whether summary_archive.md holds exactly entries [0, last] (checked by its title and
    its last entry, the cheap part: a file that does not is rendered whole again)."""
    want_tail = ("\n" + render_entry(catalog.entries[last].chunk_id, catalog.summary(last))).encode(
        "utf-8"
    ) + b"\n"
    if last == 0:
        want_tail = f"{ARCHIVE_TITLE}\n".encode() + want_tail
    title = ARCHIVE_TITLE.encode("utf-8") + b"\n\n"
    try:
        fd = open_no_symlink(paths.summary_archive, os.O_RDONLY)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        if size < len(want_tail) or size < len(title):
            return False
        head = os.pread(fd, len(title), 0)
        tail = os.pread(fd, len(want_tail), size - len(want_tail))
        before = os.pread(fd, 1, size - len(want_tail) - 1) if size > len(want_tail) else b""
    except OSError:
        return False
    finally:
        os.close(fd)
    if last == 0:
        return head == title and tail == want_tail and size == len(want_tail)
    return head == title and tail == want_tail and before == b"\n"


def _rotated(store: SessionStore, state: SessionState) -> bool:
    """Whether the session the pass started on is no longer the active one."""
    try:
        return store.read_state().session_id != state.session_id
    except SessionMemoryError:
        return True


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _discard(staged: Sequence[Path]) -> None:
    for tmp in staged:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


@contextlib.contextmanager
def _discarding(stage: dict[str, Path]) -> Iterator[None]:
    """Remove what is still staged when the commit stops half way (published files are
    popped from `stage` as they go)."""
    try:
        yield
    except BaseException:
        _discard(list(stage.values()))
        raise


def _link_chunk(
    paths: MemoryPaths, pending_path: Path, chunk_id: str, compacted: Sequence[Event]
) -> None:
    """The chunk file is the pending evidence (the same bytes): a hard link, no second copy.
    Where links are not supported the events are written again."""
    target = paths.chunk_file(chunk_id)
    try:
        os.link(pending_path, target, follow_symlinks=False)
    except OSError:
        write_chunk_file(paths, chunk_id, compacted)


def normalize_ids(events: list[Event]) -> bool:
    """Give every event a unique string id, in place (a hand-edited file may lack or repeat
    ids; the no-loss invariant counts events by id). A replaced id is kept in meta.original_id.
    Returns whether anything changed."""
    seen: set[str] = set()
    changed = False
    for i, event in enumerate(events):
        eid = event.get("id")
        if isinstance(eid, str) and eid and eid not in seen:
            seen.add(eid)
            continue
        fixed = dict(event)
        if "id" in event:
            meta = dict(fixed["meta"]) if isinstance(fixed.get("meta"), dict) else {}
            meta["original_id"] = eid
            fixed["meta"] = meta
        fixed["id"] = new_event_id()
        seen.add(fixed["id"])
        events[i] = fixed
        changed = True
    return changed


def _after_compaction_state(
    store: SessionStore,
    prompt_estimate: int,
    last_event_id: str | None,
    window: int,
    *,
    sync_folder: bool = True,
) -> None:
    """The trigger's figure becomes the predicted size of the new hot window plus summary.md
    (`overhead + ratio × estimate`, contract §5 Calibration), and grows again with every
    append, so the next pass neither fires on the stale pre-compaction figure nor goes blind
    during a long run."""
    state = store.read_state()
    predicted = state.calibration(window).predict(prompt_estimate)
    state.reset_prompt_tokens(predicted, last_event_id, prompt_estimate)
    state.counters["compactions"] = state.counters.get("compactions", 0) + 1
    store.write_state(state, sync_folder=sync_folder)
