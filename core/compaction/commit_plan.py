"""What a pass commits, computed without I/O (design: Flow; contract §5, §6, §7, §8).

A pass reads: stage the pending evidence → summarise → `build_commit` → commit. The shell
(core.maintenance.compaction_pass) reads the files and runs the summarizer; `build_commit` turns
the plan, the snapshot and the summaries into everything the commit writes — the new hot window
(pinned root, the synthetic split-turn event, the retained lines), the index entry with its
`cut_meta`, index.yaml's text or the in-place append it records in the pending sidecar, summary.md
and summary_archive.md, the retained-token estimate the trigger restarts from — and explains each
choice in `notes`, as the planner does. The commit then only stages, renames, appends and fsyncs,
with the fault points in the order the crash tests expect.

It opens no file: everything comes in as one `CommitInputs` the pass builds — what it knows of
the files as values (`index_size`, `ArchiveFacts`), and the earlier chunks' summaries through
the `IndexView` it is given (core.index.catalog.Catalog, which reads the few it is asked for
from index.yaml; tests pass a list).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from core.compaction.filerecord import FILES_KEY, next_files
from core.compaction.planner import CompactionPlan
from core.compaction.summaries import FoldStat, archive_entry_bytes, render_summary
from core.events import Event, new_event_id, now_ts
from core.index.format import ChunkEntry, entry_digest, entry_text, render_index
from core.jsonl import stored_events_bytes
from core.tokens import estimate_event_tokens, estimate_tokens

if TYPE_CHECKING:  # the config is read through its attributes: no file is loaded here
    from core.config import CompactionConfig

SYNTHETIC_KIND = "split_turn_prefix"
"""`meta.synthetic` of the event that stands for a split turn's compacted prefix (contract §2)."""


class Snapshot(Protocol):
    """The events a plan was made on (core.store.session_store.EventsSnapshot)."""

    @property
    def events(self) -> list[Event]: ...

    @property
    def tokens(self) -> list[int]: ...

    def lines_of(self, indices: Sequence[int]) -> bytes | None: ...


class _Named(Protocol):
    @property
    def chunk_id(self) -> str: ...


class IndexView(Protocol):
    """The index as the pass read it (core.index.catalog.Catalog answers all of it)."""

    @property
    def appendable(self) -> bool:
        """index.yaml is in the writer's layout, so an entry may be appended in place."""
        ...

    @property
    def size(self) -> int:
        """index.yaml's size when it was read: where an appended entry begins."""
        ...

    @property
    def entries(self) -> Sequence[_Named]: ...

    def __len__(self) -> int: ...

    def summary(self, i: int) -> str: ...

    def chunk_entry(self, i: int) -> ChunkEntry: ...

    def next_fold(self, entry: ChunkEntry) -> FoldStat: ...

    def summary_md(
        self,
        *,
        summary_max_chunks: int,
        max_rolling_summary_lines: int,
        max_summary_tokens: int | None,
        extra: tuple[ChunkEntry, FoldStat] | None = None,
    ) -> str: ...


@dataclass(frozen=True)
class ChunkSummaries:
    """What the summarise step gave: the chunk's summary (for a split turn, history and turn
    prefix joined by core.summarizer.split_turn_summary), the prefix's text alone (the
    synthetic event's content; None: not a split turn) and the backend that wrote it."""

    summary: str
    prefix: str | None
    backend: str


@dataclass(frozen=True)
class ArchiveFacts:
    """What the shell saw of summary_archive.md (build_commit reads no file).

    `holds_before_pushed`: the file holds exactly the entries before the chunk this pass
    pushes out of Recent Chunks, so that chunk can be appended (core.maintenance.compaction_pass
    checks it only when a pass appends and a second chunk or later is pushed out)."""

    exists: bool = False
    nonempty: bool = False
    holds_before_pushed: bool = False


@dataclass(frozen=True)
class CommitPlan:
    """Everything a pass's commit writes, and why (`notes`)."""

    chunk_id: str
    entry: ChunkEntry
    """The index entry; its `cut_meta` records the plan's cut and the retained estimate."""
    head: tuple[Event, ...]
    """What opens the new hot window before the retained events: the pinned root, then the
    synthetic split-turn event."""
    synthetic_event: Event | None
    hot_window: bytes
    """events.jsonl as staged: `head` and the retained events, one line each (events appended
    during the pass are added at commit)."""
    hot_window_count: int
    retained_tokens: int
    """Estimate of `head` and the retained events (contract §5's reset figure, before
    summary.md and the events carried over are added)."""
    last_event_id: str | None
    """The id of the snapshot's last event (the hot window's last unless events are carried
    over)."""
    compacted: tuple[Event, ...]
    """The chunk's events (the chunk file is the pending evidence's bytes; these are written
    again only where hard links are not supported)."""
    index_text: bytes | None
    """index.yaml whole; None: `entry` is appended in place (see `index_append`)."""
    index_append: dict[str, Any] | None
    """offset, length and digest of the appended entry: recovery cuts a torn append back to
    `offset` (core.index.catalog.truncate_torn_append)."""
    summary_md: str
    archive: bytes | None
    """summary_archive.md whole (b"": emptied); None: not rewritten."""
    archive_append: bytes | None
    """Bytes appended to summary_archive.md (the chunk pushed out of Recent Chunks)."""
    pending_meta: dict[str, Any]
    """The pending sidecar as the commit republishes it (state `committing`): chunk id,
    summary and entry, so recovery can finish the pass."""
    notes: tuple[str, ...]

    def kept_count(self, carried: Sequence[Event]) -> int:
        """Events in the new hot window once `carried` (appended during the pass) follow."""
        return self.hot_window_count + len(carried)

    def prompt_estimate(self, carried: Sequence[Event]) -> int:
        """The trigger's new figure: hot window plus summary.md, by estimate (contract §5)."""
        return (
            self.retained_tokens
            + sum(estimate_event_tokens(e) for e in carried)
            + estimate_tokens(self.summary_md)
        )

    def anchor_event_id(self, carried: Sequence[Event]) -> str | None:
        """The hot window's last event, the figure's anchor: later appends add to it."""
        if not carried:
            return self.last_event_id
        eid = carried[-1].get("id")
        return eid if isinstance(eid, str) else None


def can_append(index: IndexView, index_size: int) -> bool:
    """Whether the entry may be appended to index.yaml in place: the index has entries, is in
    the writer's layout, and is still the size the catalog was read at."""
    return index.appendable and len(index) > 0 and index.size == index_size


@dataclass(frozen=True)
class CommitInputs:
    """What a pass brings to its commit (core.maintenance.compaction_pass builds it): the plan
    and the snapshot it was made on, the summaries, what the shell read of the files, and the
    chunk's identity. One value, so the pure step's signature says what it is: these inputs
    and the session's config in, a `CommitPlan` out."""

    plan: CompactionPlan
    snapshot: Snapshot
    summaries: ChunkSummaries
    index: IndexView
    index_size: int
    """index.yaml's size on disk (0: none)."""
    archive: ArchiveFacts
    chunk_id: str
    """The id the shell chose (free in chunks/)."""
    pending_meta: Mapping[str, Any]
    """The staged pending sidecar."""
    trigger: str | None = None
    """The rule that fired, recorded in the entry."""
    now: str | None = None
    """The entry's and the synthetic event's time stamp (None: the clock)."""
    synthetic_id: str | None = None
    """The synthetic split-turn event's id (None: a fresh one)."""


def build_commit(inputs: CommitInputs, config: CompactionConfig) -> CommitPlan:
    """The commit for `inputs.plan`, a useful plan made on `inputs.snapshot`'s events.
    Raises ValueError for a plan without a cut or made on other events."""
    plan, snapshot, index = inputs.plan, inputs.snapshot, inputs.index
    events = snapshot.events
    cut = _checked_cut(plan, len(events))
    stamp = inputs.now if inputs.now is not None else now_ts()
    notes: list[str] = []
    compacted = [events[i] for i in plan.compacted_indices()]
    head, synthetic = _head(inputs, stamp, notes)
    retained_tokens = sum(estimate_event_tokens(e) for e in head) + sum(snapshot.tokens[cut:])
    notes.append(
        f"hot window: {len(head) + len(events) - cut} events ({retained_tokens:,} tokens by "
        f"estimate), the retained ones from event {cut}"
    )
    entry = _entry(inputs, compacted, stamp, retained_tokens)
    _record_files(entry, index, compacted, config)
    notes.insert(
        0,
        f"chunk {inputs.chunk_id}: {len(compacted)} event{'' if len(compacted) == 1 else 's'}, "
        f"summary of {estimate_tokens(inputs.summaries.summary):,} tokens by "
        f"{inputs.summaries.backend}",
    )
    index_append = _index_append(inputs, entry, notes)
    outputs = _derived_outputs(
        index, config, entry, index_append is not None, inputs.archive, notes
    )
    last = events[-1].get("id") if events else None
    return CommitPlan(
        chunk_id=inputs.chunk_id,
        entry=entry,
        head=tuple(head),
        synthetic_event=synthetic,
        hot_window=_hot_window_bytes(snapshot, head, cut),
        hot_window_count=len(head) + len(events) - cut,
        retained_tokens=retained_tokens,
        last_event_id=last if isinstance(last, str) else None,
        compacted=tuple(compacted),
        index_text=outputs.index,
        index_append=index_append,
        summary_md=outputs.summary_md,
        archive=outputs.archive,
        archive_append=outputs.archive_append,
        pending_meta=_committing_meta(inputs, entry, index_append),
        notes=tuple(notes),
    )


def _checked_cut(plan: CompactionPlan, n_events: int) -> int:
    """The plan's cut, once the plan is known to have one and to be made on these events: a
    commit built on another snapshot would drop or repeat events."""
    cut = plan.cut_index
    if not plan.useful or cut is None:
        raise ValueError(f"no commit for a plan without a cut: {plan.reason}")
    if plan.n_events != n_events:
        raise ValueError(f"plan was made for {plan.n_events} events, got {n_events}")
    return cut


def _head(inputs: CommitInputs, stamp: str, notes: list[str]) -> tuple[list[Event], Event | None]:
    """The pinned root, verbatim, then for a split turn the synthetic event holding the
    prefix's summary (contract §5: it points at the chunk it stands for)."""
    plan, prefix = inputs.plan, inputs.summaries.prefix
    head: list[Event] = []
    if plan.pinned_root_index is not None:
        head.append(inputs.snapshot.events[plan.pinned_root_index])
        notes.append(f"the pinned root (event {plan.pinned_root_index}) opens the hot window")
    if not plan.is_split_turn or prefix is None:
        return head, None
    synthetic: Event = {
        "id": inputs.synthetic_id if inputs.synthetic_id is not None else new_event_id(),
        "type": "system_event",
        "role": "system",
        "content": prefix,
        "ts": stamp,
        "meta": {
            "synthetic": SYNTHETIC_KIND,
            "chunk_id": inputs.chunk_id,
            "turn_start_event_id": plan.turn_start_event_id,
        },
    }
    head.append(synthetic)
    notes.append(
        f"split turn: a synthetic event with the prefix's summary "
        f"({estimate_tokens(prefix):,} tokens) follows"
        + (" the pinned root" if plan.pinned_root_index is not None else "; it opens the window")
    )
    return head, synthetic


def _entry(
    inputs: CommitInputs, compacted: Sequence[Event], stamp: str, retained_tokens: int
) -> ChunkEntry:
    """The index entry (contract §6): its cut_meta names the first kept event, the turn a
    split cut opened, and the estimates before and after."""
    plan, summaries = inputs.plan, inputs.summaries
    cut = plan.cut_index
    assert cut is not None  # build_commit checked it
    cut_meta: dict[str, Any] = {
        "first_kept_event_id": plan.first_kept_event_id,
        "tokens_before": sum(inputs.snapshot.tokens),
        "kept_tokens_estimate": retained_tokens,
    }
    if plan.is_split_turn:
        cut_meta["is_split_turn"] = True
        cut_meta["turn_start_event_id"] = plan.turn_start_event_id
    return ChunkEntry(
        chunk_id=inputs.chunk_id,
        created_at=stamp[:19] + "Z",
        event_count=len(compacted),
        first_event_id=compacted[0].get("id"),
        last_event_id=compacted[-1].get("id"),
        summary=summaries.summary,
        cut_meta=cut_meta,
        extra={
            "summary_backend": summaries.backend,
            "path": plan.path,
            "trigger": inputs.trigger,
            **_turn_start_chunk(plan, inputs.chunk_id),
        },
    )


def _record_files(
    entry: ChunkEntry, index: IndexView, compacted: Sequence[Event], config: CompactionConfig
) -> None:
    """The files the session touched, carried forward from the previous entry and updated
    with this chunk's events (masked when secrets are redacted), so the latest entry always
    holds the whole record."""
    previous_files = index.chunk_entry(len(index) - 1).extra.get(FILES_KEY) if len(index) else None
    files = next_files(previous_files, compacted, redact=config.redact_secrets)
    if files is not None:
        entry.extra[FILES_KEY] = files


def _index_append(
    inputs: CommitInputs, entry: ChunkEntry, notes: list[str]
) -> dict[str, Any] | None:
    """Where the entry is appended to index.yaml in place (offset, length, digest: what
    recovery needs to cut a torn append back), or None when the index is rendered whole."""
    index = inputs.index
    if not can_append(index, inputs.index_size):
        notes.append(f"index.yaml: rendered whole ({_why_whole(index, inputs.index_size)})")
        return None
    notes.append(f"index.yaml: the entry is appended in place at byte {index.size:,}")
    return {"offset": index.size, "length": len(entry_text(entry)), "digest": entry_digest(entry)}


def _committing_meta(
    inputs: CommitInputs, entry: ChunkEntry, index_append: dict[str, Any] | None
) -> dict[str, Any]:
    """The pending sidecar in state `committing`: with the chunk id, summary, entry (and the
    append's place) recorded, recovery can finish the pass from it alone."""
    meta = dict(inputs.pending_meta)
    meta.update(state="committing", chunk_id=inputs.chunk_id, summary=inputs.summaries.summary)
    meta["entry"] = entry.to_dict()
    if index_append is not None:
        meta["index_append"] = index_append
    return meta


def _turn_start_chunk(plan: CompactionPlan, chunk_id: str) -> dict[str, str | None]:
    """`turn_start_chunk_id` for a split turn's entry: the chunk that holds the turn's
    user_input from now on (this one, or for a continued turn the earlier one the plan names);
    null when that input is the pinned root, which stays in the hot window."""
    if not plan.is_split_turn:
        return {}
    if plan.turn_continued:
        return {"turn_start_chunk_id": plan.turn_start_chunk_id} if plan.turn_start_chunk_id else {}
    if plan.turn_start_index is not None and plan.turn_start_index == plan.pinned_root_index:
        return {"turn_start_chunk_id": None}
    return {"turn_start_chunk_id": chunk_id}


def _hot_window_bytes(snapshot: Snapshot, head: Sequence[Event], cut: int) -> bytes:
    """The head serialized, then the retained events' lines as stored (serialized again only
    when a line would be written differently, e.g. a screenshot payload still to scrub)."""
    events = snapshot.events
    retained = snapshot.lines_of(range(cut, len(events)))
    if retained is None:
        retained = stored_events_bytes(events[cut:], "hot-window event")
    return stored_events_bytes(head, "hot-window event") + retained


def _why_whole(index: IndexView, index_size: int) -> str:
    if len(index) == 0:
        return "the first chunk"
    if not index.appendable:
        return "it is not in the writer's layout"
    return f"it is {index_size:,} bytes, not the {index.size:,} the catalog was read at"


@dataclass
class _Outputs:
    """index.yaml whole (None: appended), summary.md, and summary_archive.md whole
    (`archive`) or the bytes appended to it (`archive_append`), or neither."""

    index: bytes | None
    summary_md: str
    archive: bytes | None = None
    archive_append: bytes | None = None


def _derived_outputs(
    index: IndexView,
    config: CompactionConfig,
    entry: ChunkEntry,
    appending: bool,
    archive: ArchiveFacts,
    notes: list[str],
) -> _Outputs:
    """The index and summary writes. Appending (the usual case), their cost does not depend
    on the history's length: summary.md is rendered from the few chunks it shows and the chunk
    pushed out of Recent Chunks is appended to summary_archive.md. Otherwise (a first chunk,
    an index not in the writer's layout) everything is rendered whole, as
    core.maintenance.recovery.write_summaries does."""
    smc = config.summary_max_chunks
    split = max(0, len(index) + 1 - smc)
    if not appending:
        entries = [index.chunk_entry(i) for i in range(len(index))] + [entry]
        rendered = render_summary(
            [(e.chunk_id, e.summary) for e in entries],
            summary_max_chunks=smc,
            max_rolling_summary_lines=config.max_rolling_summary_lines,
            max_summary_tokens=config.summarizer.max_summary_tokens,
            files=entry.extra.get(FILES_KEY),
        )
        text = rendered.archive_md.encode("utf-8")
        keep = text if text or archive.exists else None
        notes.append(
            f"summary.md and summary_archive.md rendered whole from {len(entries)} chunks"
            + ("" if keep is not None else " (no archive yet)")
        )
        return _Outputs(render_index(entries).encode("utf-8"), rendered.summary_md, keep)
    summary_md = index.summary_md(
        summary_max_chunks=smc,
        max_rolling_summary_lines=config.max_rolling_summary_lines,
        max_summary_tokens=config.summarizer.max_summary_tokens,
        extra=(entry, index.next_fold(entry)),
    )
    outputs = _Outputs(None, summary_md)
    if split == 0:
        outputs.archive = b"" if archive.nonempty else None
        emptied = " (summary_archive.md held chunks still recent: emptied)"
        notes.append(
            "summary.md rendered from its window; no chunk leaves Recent Chunks"
            + (emptied if archive.nonempty else "")
        )
        return outputs
    pushed_id = index.entries[split - 1].chunk_id
    pushed = archive_entry_bytes(pushed_id, index.summary(split - 1), first=split == 1)
    if split == 1:
        outputs.archive = pushed
        how = "starts summary_archive.md"
    elif archive.holds_before_pushed:
        outputs.archive_append = pushed
        how = "is appended to summary_archive.md"
    else:
        outputs.archive = b"".join(
            archive_entry_bytes(index.entries[i].chunk_id, index.summary(i), first=i == 0)
            for i in range(split)
        )
        how = (
            "leaves Recent Chunks; summary_archive.md did not end where the index says, "
            "so it is rendered whole"
        )
    notes.append(f"summary.md rendered from its window; chunk {pushed_id} {how}")
    return outputs
