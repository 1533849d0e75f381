"""What `status` and `plan` report (contract §9): the session's figures, the trigger's
verdict, the chunk and pending counts, the archives, and every warning a reader should see;
built from the store's files, changing nothing.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.compaction.calibration import PLAIN, Calibration
from core.compaction.headroom import headroom_for, pushed_out_summary
from core.compaction.planner import CompactionPlan, plan_compaction, resolve_turn_start_chunk
from core.compaction.trigger import NO_STATE, TriggerDecision, read_trigger
from core.config import CompactionConfig
from core.errors import IndexCorruptError, SessionMemoryError, StoreError
from core.events import Event
from core.index.catalog import read_catalog
from core.index.chunk_files import chunk_file_names
from core.index.pending import list_pending
from core.jsonl import parse_event_lines
from core.store.paths import MemoryPaths
from core.store.session_store import SessionStore


@dataclass(frozen=True)
class ArchiveInfo:
    session_id: str
    path: Path
    event_count: int
    chunk_count: int
    created_at: str | None
    size_bytes: int
    problem: str | None = None
    """Why its chunks cannot be read (a damaged index.yaml): it is listed, counted with no
    chunks, and `repair` rebuilds its index."""

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
        added = self.would_add_tokens
        out["would_add_tokens"] = added
        if added is not None:
            out["notes"] = [
                *out["notes"],
                f"this pass would add {added:,} tokens (predicted prompt after it "
                f"{self.plan.predicted_after_tokens:,}, {self.trigger.prompt_tokens:,} before)",
            ]
        return out

    @property
    def would_add_tokens(self) -> int | None:
        """How much bigger the prompt would be after the pass than before it (predicted); None
        when it would shrink or nothing is known. A token-triggered pass then does not
        commit (contract §5, Headroom)."""
        after, before = self.plan.predicted_after_tokens, self.trigger.prompt_tokens
        if not self.plan.useful or after is None or before is None or after < before:
            return None
        return after - before


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
    calibration: Calibration = PLAIN
    """How this session's provider counts (contract §5, Calibration)."""

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
            "calibration": self.calibration.to_json(),
        }


def session_status(
    store: SessionStore,
    config: CompactionConfig,
    *,
    memory_dir: Path,
    model: str | None,
    write_catalog: bool = True,
) -> SessionStatus:
    """The status of the store's session; a chunk listed but missing or no regular file, an
    unreadable pending folder, a damaged archive and the store's own warnings become
    warnings, not errors. `write_catalog=False` (a read-only reader): a missing or stale
    chunks/index.catalog is built in memory, never written."""
    paths = store.paths
    warnings: list[str] = []
    snap = store.read_events()
    state = None
    if paths.state.exists():
        state = store.read_state()
    index_error = None
    chunk_count = 0
    try:
        read = read_catalog(paths, write=write_catalog)
        chunk_count = len(read)
        warnings.extend(read.warnings)
        not_regular: set[str] = set()
        on_disk = chunk_file_names(paths, not_regular)
        for chunk_id in read.chunk_ids():
            if chunk_id in not_regular:
                warnings.append(
                    f"{paths.chunk_file(chunk_id)}: not a regular file; "
                    "its events cannot be recalled"
                )
            elif chunk_id not in on_disk:
                chunk_file = paths.chunk_file(chunk_id)
                warnings.append(
                    f"{chunk_file}: listed in {paths.index} but missing; "
                    "its events cannot be recalled"
                )
    except IndexCorruptError as exc:
        index_error = str(exc)
    try:
        pending_count = len(list_pending(paths))
    except SessionMemoryError as exc:
        warnings.append(str(exc))
        pending_count = 0
    model = model or (state.model if state else None)
    last_prompt = state.last_prompt_tokens if state else None
    ids = [e.get("id") for e in snap.events]
    reading = read_trigger(state, ids, snap.tokens, config, model)
    size, decision = reading.size, reading.decision
    warnings.extend(getattr(store, "warnings", []))
    return SessionStatus(
        memory_dir=memory_dir,
        session_id=state.session_id if state else None,
        event_count=snap.event_count,
        hot_tokens=sum(snap.tokens),
        last_prompt_tokens=last_prompt,
        prompt_tokens=size.tokens,
        prompt_tokens_source=size.source,
        prompt_tokens_appended=size.appended,
        context_window=config.window_for(model),
        model=model,
        should_compress=decision.should_compress,
        trigger=decision.trigger,
        trigger_reason=decision.reason,
        chunk_count=chunk_count,
        pending_count=pending_count,
        corrupt_lines=len(snap.corrupt) + store.count_corrupt_quarantined(),
        has_compressed_history=chunk_count > 0,
        archives=list_archives(memory_dir, paths, warnings),
        index_error=index_error,
        warnings=warnings,
        calibration=reading.calibration,
    )


def plan_report(
    store: SessionStore,
    config: CompactionConfig,
    *,
    model: str | None,
    prompt_tokens: int | None = None,
) -> PlanReport:
    """What a pass would do now; changes nothing."""
    snap = store.read_events()
    state = store.read_state() if store.paths.state.exists() else None
    ids = [e.get("id") for e in snap.events]
    decision = read_trigger(state, ids, snap.tokens, config, model, prompt_tokens).decision
    catalog = None
    pushed = None
    try:
        catalog = read_catalog(store.paths, write=False)  # a plan changes nothing
        pushed = pushed_out_summary(len(catalog), catalog.summary, config.summary_max_chunks)
    except (IndexCorruptError, SessionMemoryError):
        pass
    headroom = headroom_for(state or NO_STATE, config, model, store.summary_estimate(), pushed)
    plan = plan_compaction(snap.events, config, tokens=snap.tokens, headroom=headroom)
    if catalog is not None:
        with contextlib.suppress(IndexCorruptError, SessionMemoryError):
            plan = resolve_turn_start_chunk(plan, catalog.entry_extra)
    return PlanReport(trigger=decision, plan=plan, events=snap.events, tokens=snap.tokens)


def list_archives(
    memory_dir: Path, paths: MemoryPaths, warnings: list[str] | None = None
) -> list[ArchiveInfo]:
    """The archived sessions under the root, oldest first; one that cannot be read is left
    out, and one whose index is damaged is listed without chunks, each with a line in
    `warnings` (a closed session never stops the active session's commands)."""
    out: list[ArchiveInfo] = []
    for child in paths.archived_sessions():
        try:
            info = archive_info(memory_dir, child)
        except (SessionMemoryError, OSError) as exc:
            if warnings is not None:
                warnings.append(unreadable_archive(paths, child, exc))
            continue
        if info.problem is not None and warnings is not None:
            warnings.append(f"archived session {child.name} has no readable index: {info.problem}")
        out.append(info)
    return out


def unreadable_archive(paths: MemoryPaths, child: Path, exc: BaseException) -> str:
    """The warning for an archived session that cannot be read, saying how to set it aside."""
    return (
        f"archived session {child.name} left out: {exc} (status and recall skip it; to set "
        f"it aside for good, move {child} out of {paths.archive_root})"
    )


def archive_info(memory_dir: Path, child: Path) -> ArchiveInfo:
    """One archived session's row (events, chunks, creation time, bytes), read without
    writing anything; SessionMemoryError when it cannot be read. The TUI's Archive tab caches
    these rows by its files' stats."""
    store = SessionStore(memory_dir, session=child)
    event_count = _archive_event_count(store)
    problem = None
    try:
        chunk_count = len(read_catalog(store.paths, write=False))
    except (IndexCorruptError, StoreError) as exc:  # not YAML, an alias bomb, a FIFO, a link
        chunk_count = 0
        problem = str(exc)
    created = store.read_state().created_at if store.paths.state.exists() else None
    return ArchiveInfo(
        session_id=child.name,
        path=child,
        event_count=event_count,
        chunk_count=chunk_count,
        created_at=created,
        size_bytes=_tree_size(child),
        problem=problem,
    )


def _archive_event_count(store: SessionStore) -> int:
    """The events in an archive's events.jsonl, as `read_events` counts them: a whole line
    that is one JSON object. A line that looks like one (`{` … `}`) is taken without parsing
    it; only the others are parsed, so a hundred archives cost a scan each, not a parse."""
    store.paths.ensure_inside_root()
    fd = store.open_events()
    if fd is None:
        return 0
    with os.fdopen(fd, "rb") as fh:
        data = fh.read()
    whole = data[: data.rfind(b"\n") + 1]
    count = 0
    odd: list[bytes] = []
    for line in whole.split(b"\n"):
        stripped = line.strip()
        if stripped.startswith(b"{") and stripped.endswith(b"}"):
            count += 1
        elif stripped:
            odd.append(line + b"\n")
    if odd:
        count += len(parse_event_lines(b"".join(odd), final=False).events)
    return count


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


__all__ = [
    "ArchiveInfo",
    "PlanReport",
    "SessionStatus",
    "list_archives",
    "plan_report",
    "session_status",
    "unreadable_archive",
]
