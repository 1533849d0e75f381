"""The inspector's data model of the hot window, free of Textual so it can be tested and timed.

`HotWindowModel` owns a `core.reader.EventTail` on events.jsonl and turns its records into
`Row`s: the parsed event (or the corrupt line), its token estimate, cut class, a capped one-line
preview, whether it is the pinned root or a synthetic split-turn event, and the link between a
`tool_call` and its `tool_result`. Cumulative tokens "from the newest" come from prefix sums, so
an append never rewrites earlier rows.

Threading: `poll()` runs in one worker thread at a time. Rows are only ever appended to the
current lists, and a reset (a rewritten file) swaps in new lists, so a `HotWindowSnapshot`
(lists plus a length) stays valid and consistent on the UI thread without copying 100k rows.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.chunks import list_pending, read_index
from core.errors import IndexCorruptError, SessionMemoryError
from core.events import CutClass, Event, cut_class, is_synthetic
from core.manager import ArchiveInfo, MemoryManager
from core.planner import CompactionPlan, PlannerConfig, plan_compaction
from core.reader import EventTail, Record
from core.tokens import content_text
from inspector.safe_text import one_line

PREVIEW_CHARS = 160
"""Cap on a row's preview; the full text is only ever read for the selected event."""


def _str_field(event: Event, key: str) -> str:
    value = event.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def preview_of(event: Event) -> str:
    """A one-line preview of the event's content (or name/arguments), capped and made visible."""
    content = event.get("content")
    if content is None or content == "":
        args = event.get("arguments")
        text = content_text(args) if args is not None else ""
        name = _str_field(event, "name")
        text = f"{name}({text})" if name else text
    elif isinstance(content, str):
        text = content[: PREVIEW_CHARS * 4]
    else:
        text = content_text(content)[: PREVIEW_CHARS * 4]
    return one_line(text, PREVIEW_CHARS)


def _raw_text(raw: object) -> str:
    if isinstance(raw, bytes | bytearray):
        return bytes(raw[: PREVIEW_CHARS * 4]).decode("utf-8", errors="replace")
    return str(raw)[: PREVIEW_CHARS * 4]


@dataclass(frozen=True, slots=True)
class Row:
    """One line of events.jsonl as the hot-window list shows it."""

    index: int
    line_no: int
    offset: int
    event_index: int | None
    """Index among the parsed events (what the planner numbers); None for a corrupt line."""
    event: Event | None
    error: str | None
    event_id: str
    ts: str
    type: str
    role: str
    cut: CutClass | None
    tokens: int
    preview: str
    synthetic: bool
    tool_call_id: str | None

    @property
    def corrupt(self) -> bool:
        return self.event is None


def row_from_record(index: int, event_index: int | None, record: Record) -> Row:
    event = record.event
    if event is None:
        return Row(
            index=index,
            line_no=record.line_no,
            offset=record.offset,
            event_index=None,
            event=None,
            error=str(record.error or "unparsable line"),
            event_id="",
            ts="",
            type="(corrupt)",
            role="",
            cut=None,
            tokens=int(record.tokens or 0),
            preview=one_line(_raw_text(record.raw), PREVIEW_CHARS),
            synthetic=False,
            tool_call_id=None,
        )
    tcid = event.get("tool_call_id")
    return Row(
        index=index,
        line_no=record.line_no,
        offset=record.offset,
        event_index=event_index,
        event=event,
        error=None,
        event_id=_str_field(event, "id"),
        ts=_str_field(event, "ts"),
        type=_str_field(event, "type"),
        role=_str_field(event, "role"),
        cut=cut_class(event),
        tokens=int(record.tokens),
        preview=preview_of(event),
        synthetic=is_synthetic(event),
        tool_call_id=tcid if isinstance(tcid, str) and tcid else None,
    )


@dataclass(frozen=True)
class HotWindowSnapshot:
    """A consistent view of the first `length` rows (see the module docstring)."""

    rows: Sequence[Row]
    length: int
    prefix: Sequence[int]
    """prefix[i]: tokens of rows[:i]; len == length + 1 at least."""
    events: Sequence[Event]
    n_events: int
    event_rows: Sequence[int]
    """event index -> row index."""
    links: dict[int, int]
    root_row: int | None
    corrupt_count: int
    generation: int
    """Bumped on every reset, so views know their row indices are stale."""

    @property
    def total_tokens(self) -> int:
        return self.prefix[self.length]

    def cumulative_from_newest(self, index: int) -> int:
        """Tokens of rows[index:] (the row and every newer one)."""
        return self.prefix[self.length] - self.prefix[index]

    def link_of(self, index: int) -> int | None:
        other = self.links.get(index)
        return other if other is not None and other < self.length else None

    def event_list(self) -> list[Event]:
        return list(self.events[: self.n_events])

    def token_list(self) -> list[int]:
        rows, ev_rows = self.rows, self.event_rows
        return [rows[ev_rows[i]].tokens for i in range(self.n_events)]

    def row_of_event(self, event_index: int | None) -> int | None:
        if event_index is None or not 0 <= event_index < self.n_events:
            return None
        return self.event_rows[event_index]


EMPTY_SNAPSHOT = HotWindowSnapshot(
    rows=(),
    length=0,
    prefix=(0,),
    events=(),
    n_events=0,
    event_rows=(),
    links={},
    root_row=None,
    corrupt_count=0,
    generation=0,
)


@dataclass(frozen=True)
class ModelUpdate:
    """What one poll changed."""

    snapshot: HotWindowSnapshot
    reset: bool
    appended: int
    elapsed_ms: float
    missing: bool = False
    """events.jsonl does not exist (no session yet, or mid-rotation)."""


@dataclass
class _Lists:
    rows: list[Row] = field(default_factory=list)
    prefix: list[int] = field(default_factory=lambda: [0])
    events: list[Event] = field(default_factory=list)
    event_rows: list[int] = field(default_factory=list)
    links: dict[int, int] = field(default_factory=dict)
    open_calls: dict[str, int] = field(default_factory=dict)
    root_row: int | None = None
    corrupt: int = 0


class HotWindowModel:
    """events.jsonl tailed by byte offset, as rows (reset when the file is rewritten)."""

    def __init__(self, events_path: Path) -> None:
        self.path = events_path
        self._tail = EventTail(events_path)
        self._lists = _Lists()
        self._generation = 0

    def poll(self) -> ModelUpdate:
        """Read what was appended since the last poll (everything after a rewrite)."""
        start = time.perf_counter()
        missing = not self.path.exists()
        try:
            update = self._tail.poll()
            reset, records = bool(update.reset), list(update.records)
        except FileNotFoundError:
            reset, records, missing = bool(self._lists.rows), [], True
        if missing and self._lists.rows:
            reset = True
        if reset:
            self._lists = _Lists()
            self._generation += 1
        self._extend(records)
        return ModelUpdate(
            snapshot=self.snapshot(),
            reset=reset,
            appended=len(records),
            elapsed_ms=(time.perf_counter() - start) * 1000,
            missing=missing,
        )

    def _extend(self, records: Sequence[Record]) -> None:
        ls = self._lists
        for record in records:
            index = len(ls.rows)
            event_index = len(ls.events) if record.event is not None else None
            row = row_from_record(index, event_index, record)
            if row.event is not None:
                if ls.root_row is None and row.cut is CutClass.BOUNDARY:
                    ls.root_row = index
                if row.tool_call_id is not None:
                    if row.type == "tool_call":
                        ls.open_calls[row.tool_call_id] = index
                    elif row.type == "tool_result":
                        call = ls.open_calls.pop(row.tool_call_id, None)
                        if call is not None:
                            ls.links[call] = index
                            ls.links[index] = call
                ls.event_rows.append(index)
                ls.events.append(row.event)
            else:
                ls.corrupt += 1
            ls.prefix.append(ls.prefix[-1] + row.tokens)
            ls.rows.append(row)

    def snapshot(self) -> HotWindowSnapshot:
        ls = self._lists
        return HotWindowSnapshot(
            rows=ls.rows,
            length=len(ls.rows),
            prefix=ls.prefix,
            events=ls.events,
            n_events=len(ls.events),
            event_rows=ls.event_rows,
            links=ls.links,
            root_row=ls.root_row,
            corrupt_count=ls.corrupt,
            generation=self._generation,
        )


@dataclass(frozen=True)
class CutPreview:
    """A plan mapped onto rows, for drawing on the hot-window list (O(1) per row)."""

    plan: CompactionPlan
    cut_row: int | None
    """Row the hot window would open at (the cut line is drawn above it)."""
    pinned_row: int | None
    turn_start_row: int | None
    generation: int
    length: int

    def is_compacted(self, row: Row) -> bool:
        plan = self.plan
        i = row.event_index
        return (
            i is not None
            and plan.cut_index is not None
            and i < plan.cut_index
            and i != plan.pinned_root_index
        )

    def is_pulled_in(self, row: Row) -> bool:
        span = self.plan.pulled_in
        i = row.event_index
        return span is not None and i is not None and span[0] <= i < span[1]


def plan_rows(snapshot: HotWindowSnapshot, config: PlannerConfig) -> CutPreview:
    """Plan on the snapshot's parsed events (corrupt lines are not events) and map to rows."""
    plan = plan_compaction(snapshot.event_list(), config, tokens=snapshot.token_list())
    row = snapshot.row_of_event
    return CutPreview(
        plan=plan,
        cut_row=row(plan.cut_index),
        pinned_row=row(plan.pinned_root_index),
        turn_start_row=row(plan.turn_start_index),
        generation=snapshot.generation,
        length=snapshot.length,
    )


@dataclass(frozen=True)
class LightStatus:
    """What the header needs besides the rows, read without parsing events.jsonl again."""

    session_id: str | None = None
    model: str | None = None
    last_prompt_tokens: int | None = None
    run_started_at: str | None = None
    chunk_count: int = 0
    pending_count: int = 0
    quarantined_lines: int = 0
    index_error: str | None = None
    archives: tuple[ArchiveInfo, ...] | None = None
    """None: not read this time (only read when session_archive/ changed)."""
    errors: tuple[str, ...] = ()
    elapsed_ms: float = 0.0


def read_light_status(manager: MemoryManager, *, include_archives: bool) -> LightStatus:
    """state.json, the index, pending evidence and quarantined lines, each failure kept as text."""
    start = time.perf_counter()
    errors: list[str] = []
    paths = manager.paths
    sid = model = run_started = None
    last_prompt: int | None = None
    if paths.state.exists():
        try:
            state = manager.store.read_state()
            sid, model, last_prompt = state.session_id, state.model, state.last_prompt_tokens
            run_started = state.run_started_at
        except SessionMemoryError as exc:
            errors.append(str(exc))
    chunk_count, index_error = 0, None
    try:
        chunk_count = len(read_index(paths).entries)
    except IndexCorruptError as exc:
        index_error = str(exc)
    except SessionMemoryError as exc:
        errors.append(str(exc))
    pending = 0
    try:
        pending = len(list_pending(paths))
    except SessionMemoryError as exc:
        errors.append(str(exc))
    quarantined = 0
    try:
        quarantined = manager.store.count_corrupt_quarantined()
    except (SessionMemoryError, OSError) as exc:
        errors.append(str(exc))
    archives: tuple[ArchiveInfo, ...] | None = None
    if include_archives:
        try:
            archives = tuple(manager.list_archives())
        except (SessionMemoryError, OSError) as exc:
            errors.append(str(exc))
            archives = ()
    return LightStatus(
        session_id=sid,
        model=manager.model or model,
        last_prompt_tokens=last_prompt,
        run_started_at=run_started,
        chunk_count=chunk_count,
        pending_count=pending,
        quarantined_lines=quarantined,
        index_error=index_error,
        archives=archives,
        errors=tuple(errors),
        elapsed_ms=(time.perf_counter() - start) * 1000,
    )
