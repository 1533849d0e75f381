"""The two-phase maintenance pass and crash recovery (design: Flow, Concurrency; contract §8).

A pass holds the session lock only to read a snapshot, to write its pending evidence and to
commit; planning and summarising run without it, so appends never wait for a summarizer.
Before the commit the pass checks that events.jsonl still begins with its snapshot (else it
abandons); events appended meanwhile are carried over after the retained hot window.

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
from typing import Any

from core.atomic import TEMP_NAME_RE, atomic_write_text
from core.chunks import (
    ChunkEntry,
    delete_pending,
    list_chunk_files,
    list_pending,
    new_pending_id,
    next_chunk_id,
    read_chunk_events,
    read_index,
    write_chunk_file,
    write_index,
    write_pending,
)
from core.config import CompactionConfig
from core.errors import ChunkIdError, StoreError
from core.events import Event, new_event_id, now_ts
from core.faults import fault_point
from core.planner import CompactionPlan, plan_compaction
from core.store import SessionStore
from core.summaries import render_summary
from core.summarizer import (
    ExtractiveSummarizer,
    Summarizer,
    SummaryKind,
    split_turn_summary,
    summarize_with_fallback,
)
from core.tokens import estimate_event_tokens
from core.trigger import TriggerDecision, should_compress

SYNTHETIC_KIND = "split_turn_prefix"


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
        recovered = recover_locked(store, config)
        state = store.read_state()
        snap = store.read_events(locked=True)
        if normalize_ids(snap.events):
            store.replace_events(snap.events, quarantine=snap.corrupt)
            recovered["ids_assigned"] = recovered.get("ids_assigned", 0) + 1
            snap = store.read_events(locked=True)
        entries = read_index(paths).entries
    timings["lock_read"] = _ms(t)

    t = time.perf_counter()
    pt = prompt_tokens if prompt_tokens is not None else state.last_prompt_tokens
    decision = should_compress(
        prompt_tokens=pt,
        event_count=snap.event_count,
        config=config,
        model=model or state.model,
    )
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
    plan = plan_compaction(snap.events, config, tokens=snap.tokens)
    result.plan = plan
    timings["plan"] = _ms(t)
    if not plan.useful or plan.cut_index is None:
        result.reason = f"no useful cut: {plan.reason}"
        result.kept_event_count = snap.event_count
        timings["total"] = _ms(t_total)
        return result

    events = snap.events
    compacted = [events[i] for i in plan.compacted_indices()]
    pending_id = new_pending_id()
    pending_meta: dict[str, Any] = {
        "session_id": state.session_id,
        "created_at": now_ts(),
        "state": "in_flight",
        "snapshot_size": snap.size,
        "path": plan.path,
        "trigger": decision.trigger,
    }
    t = time.perf_counter()
    with store.lock():
        write_pending(paths, pending_id, compacted, pending_meta)
    timings["lock_pending"] = _ms(t)
    fault_point("after_pending_write")

    t = time.perf_counter()
    rolling = render_summary(
        [(e.chunk_id, e.summary) for e in entries],
        summary_max_chunks=config.summary_max_chunks,
        max_rolling_summary_lines=config.max_rolling_summary_lines,
    ).rolling_lines
    previous = "\n".join(rolling) or None
    backends: list[str] = []

    def summarize(part: list[Event], kind: SummaryKind) -> str:
        text, used = summarize_with_fallback(
            summarizer,
            part,
            kind=kind,
            previous_summary=previous,
            focus=focus,
            max_tokens=config.summarizer.max_summary_tokens,
        )
        backends.append(used)
        return text

    prefix_text: str | None = None
    if plan.is_split_turn:
        history_events = [events[i] for i in plan.history_indices()]
        history_text = summarize(history_events, "history") if history_events else ""
        prefix_text = summarize([events[i] for i in plan.prefix_indices()], "turn_prefix")
        chunk_summary = split_turn_summary(history_text, prefix_text)
    else:
        chunk_summary = summarize(compacted, "history")
    backend = next((b for b in backends if b.endswith("fallback")), backends[0])
    timings["summarize"] = _ms(t)
    fault_point("after_summarize")

    t = time.perf_counter()
    with store.lock():
        current = store.read_state()
        if current.session_id != state.session_id or not paths.events.exists():
            delete_pending(paths, pending_id)
            return _abandon(result, "abandoned: the session was rotated during the pass", t_total)
        still, appended = store.snapshot_still_prefix(snap)
        if not still:
            delete_pending(paths, pending_id)
            return _abandon(
                result, "abandoned: events.jsonl was rewritten by another process", t_total
            )
        tail = store.parse_event_lines(
            appended,
            base_offset=snap.size,
            base_line=snap.next_line,
            final=True,
        )
        entries = read_index(paths).entries
        taken = {e.chunk_id for e in entries} | set(list_chunk_files(paths))
        chunk_id = next_chunk_id(taken)

        cut = plan.cut_index
        kept: list[Event] = []
        if plan.pinned_root_index is not None:
            kept.append(events[plan.pinned_root_index])
        if prefix_text is not None:
            kept.append(
                {
                    "id": new_event_id(),
                    "type": "system_event",
                    "role": "system",
                    "content": prefix_text,
                    "ts": now_ts(),
                    "meta": {"synthetic": SYNTHETIC_KIND, "chunk_id": chunk_id},
                }
            )
        kept.extend(events[cut:])
        kept.extend(tail.events)
        kept_tokens = sum(estimate_event_tokens(e) for e in kept)

        cut_meta: dict[str, Any] = {
            "first_kept_event_id": events[cut].get("id"),
            "tokens_before": sum(snap.tokens),
            "kept_tokens_estimate": kept_tokens,
        }
        if plan.is_split_turn:
            cut_meta["is_split_turn"] = True
            cut_meta["turn_start_event_id"] = plan.turn_start_event_id
        entry = ChunkEntry(
            chunk_id=chunk_id,
            created_at=now_ts()[:19] + "Z",
            event_count=len(compacted),
            first_event_id=compacted[0].get("id"),
            last_event_id=compacted[-1].get("id"),
            summary=chunk_summary,
            cut_meta=cut_meta,
            extra={"summary_backend": backend, "path": plan.path, "trigger": decision.trigger},
        )
        pending_meta.update(
            state="committing",
            chunk_id=chunk_id,
            summary=chunk_summary,
            entry=entry.to_dict(),
        )
        write_pending(paths, pending_id, compacted, pending_meta)
        fault_point("after_pending_commit")

        store.replace_events(kept, quarantine=[*snap.corrupt, *tail.corrupt])
        fault_point("after_events_replace")
        write_chunk_file(paths, chunk_id, compacted)
        fault_point("after_chunk_write")
        entries.append(entry)
        write_index(paths, entries)
        fault_point("after_index_write")
        write_summaries(store, config, entries)
        fault_point("after_summaries_write")
        _after_compaction_state(store, kept_tokens)
        fault_point("after_state_write")
        delete_pending(paths, pending_id)
    timings["lock_write"] = _ms(t)
    timings["total"] = _ms(t_total)

    result.compacted = True
    result.chunk_id = chunk_id
    result.kept_event_count = len(kept)
    result.compacted_event_count = len(compacted)
    result.carried_over_count = len(tail.events)
    result.quarantined_count = len(snap.corrupt) + len(tail.corrupt)
    result.summary_backend = backend
    result.is_split_turn = plan.is_split_turn
    return result


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


def _after_compaction_state(store: SessionStore, kept_tokens: int) -> None:
    """last_prompt_tokens becomes the retained window's estimate, so the next pass does not
    compact again on the stale pre-compaction figure (design: Concurrency)."""
    state = store.read_state()
    state.last_prompt_tokens = kept_tokens
    state.counters["compactions"] = state.counters.get("compactions", 0) + 1
    store.write_state(state)


def write_summaries(
    store: SessionStore, config: CompactionConfig, entries: Sequence[ChunkEntry]
) -> None:
    """Re-render summary.md and summary_archive.md from the index (their one source of truth)."""
    rendered = render_summary(
        [(e.chunk_id, e.summary) for e in entries],
        summary_max_chunks=config.summary_max_chunks,
        max_rolling_summary_lines=config.max_rolling_summary_lines,
    )
    if not entries:
        return
    atomic_write_text(store.paths.summary, rendered.summary_md)
    fault_point("between_summary_writes")
    if rendered.archive_md or store.paths.summary_archive.exists():
        atomic_write_text(store.paths.summary_archive, rendered.archive_md)


def recover_locked(store: SessionStore, config: CompactionConfig) -> dict[str, int]:
    """Finish or undo what a crashed pass left (caller holds the session lock and, unless this
    is a rotation, the maintenance slot). Nothing is lost, nothing is doubled."""
    paths = store.paths
    counts: dict[str, int] = {}

    def bump(key: str, n: int = 1) -> None:
        counts[key] = counts.get(key, 0) + n

    swept = _sweep_temp_files(store)
    if swept:
        bump("temp_files_removed", swept)
    orphans = _sweep_orphan_pending_meta(store)
    if orphans:
        bump("pending_meta_removed", orphans)
    pending = list_pending(paths)
    chunk_files = set(list_chunk_files(paths))
    if not pending and not chunk_files:
        return counts
    entries = read_index(paths).entries
    indexed = {e.chunk_id for e in entries}
    consumed_pending = {
        str(e.extra.get("source_pending_id")) for e in entries if e.extra.get("source_pending_id")
    }
    snap = store.read_events(locked=True)
    hot_ids = {e.get("id") for e in snap.events}
    changed = False

    for p in pending:
        ids = [e.get("id") for e in p.events]
        meta_chunk = p.meta.get("chunk_id")
        if (
            isinstance(meta_chunk, str) and meta_chunk in indexed
        ) or p.pending_id in consumed_pending:
            delete_pending(paths, p.pending_id)
            bump("pending_already_indexed")
            changed = True
            continue
        cut_ids = [i for i in ids if i not in hot_ids]
        if not cut_ids and p.events:
            if isinstance(meta_chunk, str) and meta_chunk in chunk_files:
                _delete_chunk_file(store, meta_chunk)
                chunk_files.discard(meta_chunk)
            delete_pending(paths, p.pending_id)
            bump("pending_undone")
            continue
        if not p.events:
            delete_pending(paths, p.pending_id)
            bump("pending_empty_deleted")
            continue
        gone = [e for e in p.events if e.get("id") not in hot_ids]
        chunk_id = _pending_chunk_id(p.pending_id, meta_chunk, indexed)
        summary = p.meta.get("summary")
        planned = p.meta.get("entry")
        whole = len(gone) == len(p.events) and isinstance(summary, str)
        entry = recovered_entry(
            chunk_id,
            gone,
            config,
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
        )
        write_chunk_file(paths, chunk_id, gone)
        fault_point("recovery_after_chunk_write")
        entries.append(entry)
        indexed.add(chunk_id)
        chunk_files.add(chunk_id)
        write_index(paths, entries)
        fault_point("recovery_after_index_write")
        delete_pending(paths, p.pending_id)
        bump("pending_finished")
        changed = True

    for orphan in sorted(chunk_files - indexed):
        try:
            orphan_events, _bad = read_chunk_events(paths, orphan)
        except (StoreError, ChunkIdError):
            continue
        gone = [e for e in orphan_events if e.get("id") not in hot_ids]
        if not gone:
            _delete_chunk_file(store, orphan)
            bump("orphan_chunks_deleted")
            continue
        if len(gone) < len(orphan_events):
            write_chunk_file(paths, orphan, gone)
        orphan_events = gone
        entries.append(recovered_entry(orphan, orphan_events, config))
        indexed.add(orphan)
        write_index(paths, entries)
        bump("orphan_chunks_indexed")
        changed = True

    if changed:
        write_summaries(store, config, entries)
    return counts


def recovered_entry(
    chunk_id: str,
    events: Sequence[Event],
    config: CompactionConfig,
    *,
    summary: str | None = None,
    cut_meta: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> ChunkEntry:
    """An index entry for events recovered after a crash or rebuilt by `repair`; without a
    recorded summary the extractive summarizer writes one (no model call during recovery)."""
    if summary is None:
        summary = ExtractiveSummarizer().summarize(
            events, max_tokens=config.summarizer.max_summary_tokens
        )
    return ChunkEntry(
        chunk_id=chunk_id,
        created_at=now_ts()[:19] + "Z",
        event_count=len(events),
        first_event_id=events[0].get("id") if events else None,
        last_event_id=events[-1].get("id") if events else None,
        summary=summary,
        cut_meta=cut_meta,
        extra={"summary_backend": "extractive", **(extra or {}), "recovered_at": now_ts()},
    )


def _sweep_temp_files(store: SessionStore) -> int:
    """Remove temporary files of atomic writes that died before their rename. Every atomic
    write under session/ holds the session lock, which the caller holds: none is in progress."""
    paths = store.paths
    removed = 0
    for folder in (paths.session, paths.chunks_dir, paths.pending_dir):
        paths.ensure_inside_root(folder)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if TEMP_NAME_RE.match(name):
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
            from core.paths import validate_chunk_id

            return validate_chunk_id(meta_chunk)
        except ChunkIdError:
            pass
    return pending_id


def _delete_chunk_file(store: SessionStore, chunk_id: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        store.paths.chunk_file(chunk_id).unlink()
