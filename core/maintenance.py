"""The two-phase maintenance pass (design: Flow, Concurrency; contract §8); its crash
recovery is core/recovery.py.

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

Crash safety: the pending evidence (`chunks/pending/<id>.jsonl` + `.meta.json`) is written
before events.jsonl loses anything, and its sidecar records the chunk id and summary before
the replace, so `recover` can always finish a pass that died half way — or drop evidence whose
events are all still in the hot window.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic import (
    append_synced,
    fsync_dir,
    open_no_symlink,
    publish,
    stage_bytes,
)
from core.catalog import (
    Catalog,
    append_index_entry,
    read_catalog,
)
from core.chunks import (
    delete_pending,
    new_pending_id,
    next_chunk_id,
    pending_meta_bytes,
    write_chunk_file,
)
from core.commit_plan import ArchiveFacts, ChunkSummaries, CommitPlan, build_commit, can_append
from core.config import CompactionConfig
from core.errors import IndexCorruptError, SessionMemoryError, StoreError
from core.events import Event, new_event_id, now_ts
from core.faults import fault_point
from core.headroom import headroom_for, pushed_out_summary
from core.jsonl import stored_events_bytes
from core.paths import MemoryPaths
from core.planner import CompactionPlan, plan_compaction, resolve_turn_start_chunk
from core.recovery import recover_locked
from core.snapshot import EventsSnapshot
from core.state import SessionState
from core.store import SessionStore
from core.summaries import (
    ARCHIVE_TITLE,
    render_entry,
)
from core.summarizer import (
    Summarizer,
    SummaryKind,
    continued_turn_prefix,
    split_turn_overhead_tokens,
    split_turn_summary,
    summarize_with_fallback,
)
from core.tokens import estimate_tokens
from core.trigger import TriggerDecision, trigger_for


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


@contextlib.contextmanager
def maintenance_slot(store: SessionStore, timeout: float = 0) -> Iterator[bool]:
    """Hold M/.maintenance.lock: yields False when another pass, in this process or any
    other, still holds it after `timeout` seconds (0: do not wait)."""
    store.paths.root.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    while True:
        with store.maintenance_lock() as got:
            if got or time.monotonic() >= deadline:
                yield got
                return
        time.sleep(0.05)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


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
        return _run_pass_locked(
            store,
            config,
            summarizer,
            force=force,
            prompt_tokens=prompt_tokens,
            model=model,
            focus=focus,
        )


def _run_pass_locked(
    store: SessionStore,
    config: CompactionConfig,
    summarizer: Summarizer,
    *,
    force: bool,
    prompt_tokens: int | None,
    model: str | None,
    focus: str | None,
) -> PassResult:
    t_total = time.perf_counter()
    timings: dict[str, float] = {}
    paths = store.paths

    t = time.perf_counter()
    with store.lock():
        store.ensure_session()
        recovered = recover_locked(store, config, thorough=False)
        state = store.read_state()
        pin = store.pin_events()
    timings["lock_read"] = _ms(t)
    t = time.perf_counter()
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
            raise StoreError(f"{paths.events} vanished during the pass")
        snap = store.read_pinned(pin)
    try:
        return _pass_on_snapshot(
            store,
            config,
            summarizer,
            snap,
            state,
            recovered,
            timings,
            t_total=t_total,
            t_read=t,
            force=force,
            prompt_tokens=prompt_tokens,
            model=model,
            focus=focus,
        )
    finally:
        snap.close()


def _pass_on_snapshot(
    store: SessionStore,
    config: CompactionConfig,
    summarizer: Summarizer,
    snap: EventsSnapshot,
    state: SessionState,
    recovered: dict[str, int],
    timings: dict[str, float],
    *,
    t_total: float,
    t_read: float,
    force: bool,
    prompt_tokens: int | None,
    model: str | None,
    focus: str | None,
) -> PassResult:
    """Trigger and plan, then stage the pending evidence → summarise → build_commit → commit
    (each step below; the commit's writes are the only impure part after the summarizer)."""
    paths = store.paths
    index_key = _stat_key(paths.index)
    catalog = read_catalog(paths)
    timings["read"] = _ms(t_read)

    t = time.perf_counter()
    decision = trigger_for(state, snap.events, snap.tokens, config, model, prompt_tokens)
    result = PassResult(
        compacted=False,
        events_before=snap.event_count,
        trigger=decision,
        recovered=recovered,
        timings_ms=timings,
    )
    if not force and not decision.should_compress:
        result.reason = f"not needed: {decision.reason}"
        result.kept_event_count = snap.event_count
        timings["total"] = _ms(t_total)
        return result
    headroom = headroom_for(
        state,
        config,
        model,
        store.summary_estimate(),
        pushed_out_summary(len(catalog), catalog.summary, config.summary_max_chunks),
    )
    plan = plan_compaction(snap.events, config, tokens=snap.tokens, headroom=headroom)
    plan = resolve_turn_start_chunk(plan, catalog.entry_extra)
    result.plan = plan
    timings["plan"] = _ms(t)
    if not plan.useful or plan.cut_index is None:
        result.reason = f"no useful cut: {plan.reason}"
        result.kept_event_count = snap.event_count
        timings["total"] = _ms(t_total)
        return result
    before = _grows(decision, plan.predicted_after_tokens, force)
    if before is not None:
        result.reason = _not_smaller(plan.predicted_after_tokens, before)
        result.kept_event_count = snap.event_count
        timings["total"] = _ms(t_total)
        return result

    pending = _stage_pending(store, snap, state, plan, decision.trigger, timings)
    if pending is None:
        return _abandon(result, "abandoned: the session was rotated during the pass", t_total)

    # The catalog reads old summaries out of index.yaml only when they are needed, and a
    # rotation does not wait for this pass: once it has moved the session those reads fail
    # (or find the new session's index), and the pass abandons as it would at its commit.
    try:
        t = time.perf_counter()
        summaries = _summarise(summarizer, snap.events, plan, catalog, config, focus)
        timings["summarize"] = _ms(t)
        fault_point("after_summarize")

        t = time.perf_counter()
        index_size = index_key[2] if index_key is not None else 0
        commit = build_commit(
            plan,
            snap,
            summaries,
            config,
            index=catalog,
            chunk_id=_free_chunk_id(paths, catalog),
            index_size=index_size,
            archive=_archive_facts(paths, catalog, config, can_append(catalog, index_size)),
            pending_meta=pending.meta,
            trigger=decision.trigger,
        )
    except (StoreError, IndexCorruptError):
        if not _rotated(store, state):
            raise
        return _abandon(result, "abandoned: the session was rotated during the pass", t_total)
    # The summaries are written now: the prompt after the pass is known but for the provider's
    # count. A token-triggered pass that would not make it smaller is dropped (contract §5).
    predicted = headroom.calibration.predict(commit.prompt_estimate(()))
    before = _grows(decision, predicted, force)
    if before is not None:
        with store.lock():
            delete_pending(paths, pending.pending_id)
        result.reason = _not_smaller(predicted, before)
        result.kept_event_count = snap.event_count
        timings["total"] = _ms(t_total)
        return result
    return _commit(
        store,
        snap,
        state,
        catalog,
        commit,
        pending,
        index_key,
        result,
        t,
        t_total,
        headroom.window,
    )


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


@dataclass(frozen=True)
class _Pending:
    """The pass's published pending evidence (`chunks/pending/<id>.jsonl` and its sidecar)."""

    pending_id: str
    path: Path
    meta_path: Path
    meta: dict[str, Any]


def _stage_pending(
    store: SessionStore,
    snap: EventsSnapshot,
    state: SessionState,
    plan: CompactionPlan,
    trigger: str | None,
    timings: dict[str, float],
) -> _Pending | None:
    """Write the compacted events and the in-flight sidecar beside their targets unlocked,
    then publish both under a short lock hold. None: the session was rotated meanwhile."""
    paths = store.paths
    pending_id = new_pending_id()
    meta: dict[str, Any] = {
        "session_id": state.session_id,
        "created_at": now_ts(),
        "state": "in_flight",
        "snapshot_size": snap.size,
        "path": plan.path,
        "trigger": trigger,
    }
    t = time.perf_counter()
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
        staged.append(stage_bytes(pending.meta_path, _meta_bytes(meta, pending.meta_path)))
    except StoreError:
        _discard(staged)
        if not _rotated(store, state):
            raise
        return None
    timings["stage_pending"] = _ms(t)
    t = time.perf_counter()
    with store.lock():
        if store.read_state().session_id != state.session_id:
            _discard(staged)
            return None
        try:
            publish(staged[0], pending.path)
            fault_point("between_pending_writes")
            publish(staged[1], pending.meta_path)
        except BaseException:
            _discard(staged)
            raise
    timings["lock_pending"] = _ms(t)
    fsync_dir(paths.pending_dir)
    fault_point("after_pending_write")
    return pending


def _summarise(
    summarizer: Summarizer,
    events: Sequence[Event],
    plan: CompactionPlan,
    catalog: Catalog,
    config: CompactionConfig,
    focus: str | None,
) -> ChunkSummaries:
    """Summarise the compacted events, falling back to extractive. The latest chunk's summary
    is the checkpoint a summarizer updates (older chunks live on in the Rolling Summary);
    `focus` steers this pass's summaries and is never stored."""
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
        chunk_prefix = continued_turn_prefix(prefix_text) if plan.turn_continued else prefix_text
        chunk_summary = split_turn_summary(history_text, chunk_prefix)
    else:
        chunk_summary = summarize(
            [events[i] for i in plan.compacted_indices()], "history", max_summary
        )
    backend = next((b for b in backends if b.endswith("fallback")), backends[0])
    return ChunkSummaries(chunk_summary, prefix_text, backend)


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


def _commit(
    store: SessionStore,
    snap: EventsSnapshot,
    state: SessionState,
    catalog: Catalog,
    commit: CommitPlan,
    pending: _Pending,
    index_key: tuple[int, int, int, int] | None,
    result: PassResult,
    t: float,
    t_total: float,
    window: int,
) -> PassResult:
    """Stage every file the commit publishes, publish them under the lock, make the renames
    durable, then delete the evidence."""
    timings = result.timings_ms
    stage = _stage_commit(store, state, commit, pending)
    if stage is None:
        return _abandon(result, "abandoned: the session was rotated during the pass", t_total)
    timings["stage_commit"] = _ms(t)
    t = time.perf_counter()
    outcome = _publish_commit(
        store, snap, state, catalog, commit, pending, index_key, stage, window
    )
    if isinstance(outcome, str):
        return _abandon(result, outcome, t_total)
    carried, quarantined, folders = outcome
    timings["lock_write"] = _ms(t)
    # The renames above must be durable before the evidence goes; the folders are fsynced
    # through descriptors taken under the lock (the right folders even after a rotation),
    # so these fsyncs do not hold appends up.
    try:
        for fd in folders:
            os.fsync(fd)
    finally:
        for fd in folders:
            os.close(fd)
    t = time.perf_counter()
    with store.lock():
        if not _rotated(store, state):
            delete_pending(store.paths, pending.pending_id, durable=False)
    timings["lock_cleanup"] = _ms(t)
    timings["total"] = _ms(t_total)

    result.compacted = True
    result.chunk_id = commit.chunk_id
    result.kept_event_count = commit.kept_count(carried)
    result.compacted_event_count = len(commit.compacted)
    result.carried_over_count = len(carried)
    result.quarantined_count = quarantined
    result.summary_backend = commit.entry.extra.get("summary_backend")
    result.is_split_turn = commit.synthetic_event is not None
    return result


def _stage_commit(
    store: SessionStore, state: SessionState, commit: CommitPlan, pending: _Pending
) -> dict[str, Path] | None:
    """Write the sidecar (now `committing`), events.jsonl, the index and the summaries as
    temporary files beside their targets, unlocked. None: the session was rotated meanwhile
    (the evidence is deleted)."""
    paths = store.paths
    paths.ensure_inside_root(paths.chunks_dir)
    stage: dict[str, Path] = {}
    try:
        meta = _meta_bytes(commit.pending_meta, pending.meta_path)
        stage["meta"] = stage_bytes(pending.meta_path, meta)
        stage["events"] = stage_bytes(paths.events, commit.hot_window)
        if commit.index_text is not None:
            stage["index"] = stage_bytes(paths.index, commit.index_text)
        stage["summary"] = stage_bytes(paths.summary, commit.summary_md.encode("utf-8"))
        if commit.archive is not None:
            stage["archive"] = stage_bytes(paths.summary_archive, commit.archive)
    except StoreError:
        _discard(list(stage.values()))
        if not _rotated(store, state):
            raise
        with store.lock():
            delete_pending(paths, pending.pending_id)
        return None
    except BaseException:
        _discard(list(stage.values()))
        raise
    return stage


def _publish_commit(
    store: SessionStore,
    snap: EventsSnapshot,
    state: SessionState,
    catalog: Catalog,
    commit: CommitPlan,
    pending: _Pending,
    index_key: tuple[int, int, int, int] | None,
    stage: dict[str, Path],
    window: int,
) -> tuple[list[Event], int, list[int]] | str:
    """Under the session lock: check the pass still holds, then rename (or append) each file
    in the order recovery relies on, a fault point after each. Returns the events appended
    during the pass (carried over), how many lines were quarantined and descriptors of the
    folders to fsync; or why the pass is abandoned."""
    paths = store.paths
    with store.lock(), _discarding(stage):
        abandon = _why_abandon(store, snap, state, index_key)
        if isinstance(abandon, str):
            _discard(list(stage.values()))
            delete_pending(paths, pending.pending_id)
            return abandon
        tail = store.parse_event_lines(
            abandon, base_offset=snap.size, base_line=snap.next_line, final=True
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
        _after_compaction_state(
            store,
            commit.prompt_estimate(tail.events),
            commit.anchor_event_id(tail.events),
            window,
            sync_folder=False,
        )
        fault_point("after_state_write")
        folders = [
            os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            for folder in (paths.session, paths.chunks_dir)
        ]
    return tail.events, len(snap.corrupt) + len(tail.corrupt), folders


def _why_abandon(
    store: SessionStore,
    snap: EventsSnapshot,
    state: SessionState,
    index_key: tuple[int, int, int, int] | None,
) -> str | bytes:
    """Under the lock at commit: why the pass must give up (a str), else the bytes appended
    to events.jsonl since the snapshot."""
    paths = store.paths
    current = store.read_state()
    if current.session_id != state.session_id or not paths.events.exists():
        return "abandoned: the session was rotated during the pass"
    still, appended = store.snapshot_still_prefix(snap)
    if not still:
        return "abandoned: events.jsonl was rewritten by another process"
    if _stat_key(paths.index) != index_key:
        # Not expected (only the holder of the maintenance slot writes the index): the
        # summaries were rendered from another index; nothing is cut yet, so give up.
        return "abandoned: index.yaml changed during the pass"
    return appended


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


def _meta_bytes(meta: dict[str, Any], where: Path) -> bytes:
    """A pending sidecar as `write_pending` writes it (core.chunks.pending_meta_bytes)."""
    return pending_meta_bytes(meta, where)


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


def _abandon(result: PassResult, reason: str, t_total: float) -> PassResult:
    result.abandoned = True
    result.reason = reason
    result.timings_ms["total"] = _ms(t_total)
    return result


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
