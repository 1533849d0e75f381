"""The inspector's data model of the hot window, free of Textual so it can be tested and timed.

`HotWindowModel` owns a `core.reader.EventTail` on events.jsonl and turns its records into
`Row`s: the parsed event (or the corrupt line), its token estimate, cut class, a capped one-line
preview, whether it is the pinned root or a synthetic split-turn event, and the link between a
`tool_call` and its `tool_result`. Cumulative tokens "from the newest" come from prefix sums, so
an append never rewrites earlier rows.

Loading is cheap per row: `poll()` only appends records, prefix sums and links; a `Row` (cut
class, capped preview, marks) is built when it is first drawn or selected (`LazyRows`). A big
file first gets `peek()`: its newest 256 KB parsed alone, so the newest events are on screen
while the whole file loads (row numbers and the pinned root follow with the full load).

Threading: `poll()` runs in one worker thread at a time. Rows are only ever appended to the
current lists, and a reset (a rewritten file) swaps in new lists, so a `HotWindowSnapshot`
(lists plus a length) stays valid and consistent on the UI thread without copying 100k rows.
The row cache is filled from the UI thread only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

from core.chunks import list_pending, read_index
from core.errors import IndexCorruptError, SessionMemoryError
from core.events import CutClass, Event, cut_class, is_synthetic
from core.manager import ArchiveInfo, MemoryManager
from core.planner import CompactionPlan, PlannerConfig, plan_compaction
from core.reader import RAW_KEEP_BYTES, EventTail, Record
from core.store import parse_event_lines
from core.tokens import content_text, estimate_event_tokens
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


@dataclass
class _Lists:
    """The rows of one generation of events.jsonl; only ever appended to."""

    records: list[Record] = field(default_factory=list)
    row_event: list[int | None] = field(default_factory=list)
    prefix: list[int] = field(default_factory=lambda: [0])
    events: list[Event] = field(default_factory=list)
    event_rows: list[int] = field(default_factory=list)
    event_tokens: list[int] = field(default_factory=list)
    links: dict[int, int] = field(default_factory=dict)
    open_calls: dict[str, int] = field(default_factory=dict)
    root_row: int | None = None
    corrupt: int = 0
    cache: dict[int, Row] = field(default_factory=dict)
    """Rows built so far (only the ones drawn or selected are ever built)."""


class LazyRows(Sequence[Row]):
    """rows[i] builds the Row of record i on first use (a 100k-row load builds ~40)."""

    def __init__(self, lists: _Lists, length: int) -> None:
        self._lists = lists
        self._length = length

    def __len__(self) -> int:
        return self._length

    def _row(self, i: int) -> Row:
        ls = self._lists
        row = ls.cache.get(i)
        if row is None:
            row = row_from_record(i, ls.row_event[i], ls.records[i])
            if len(ls.cache) > 20_000:
                ls.cache.clear()
            ls.cache[i] = row
        return row

    @overload
    def __getitem__(self, index: int) -> Row: ...

    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...

    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._row(index)

    def __iter__(self) -> Iterator[Row]:
        return (self._row(i) for i in range(self._length))


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
    event_tokens: Sequence[int]
    links: dict[int, int]
    root_row: int | None
    corrupt_count: int
    generation: int
    """Bumped on every reset, so views know their row indices are stale."""
    partial: bool = False
    """Only the newest lines, read while the whole file loads: row numbers are not final."""

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
        return list(self.event_tokens[: self.n_events])

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
    event_tokens=(),
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


def _extend(ls: _Lists, records: Sequence[Record]) -> None:
    """Append records: prefix sums, event index, root, tool links; no Row is built here."""
    for record in records:
        index = len(ls.records)
        event = record.event
        ls.records.append(record)
        ls.prefix.append(ls.prefix[-1] + record.tokens)
        if event is None:
            ls.corrupt += 1
            ls.row_event.append(None)
            continue
        ls.row_event.append(len(ls.events))
        ls.events.append(event)
        ls.event_rows.append(index)
        ls.event_tokens.append(record.tokens)
        if ls.root_row is None and cut_class(event) is CutClass.BOUNDARY:
            ls.root_row = index
        tcid = event.get("tool_call_id")
        if isinstance(tcid, str) and tcid:
            etype = event.get("type")
            if etype == "tool_call":
                ls.open_calls[tcid] = index
            elif etype == "tool_result":
                call = ls.open_calls.pop(tcid, None)
                if call is not None:
                    ls.links[call] = index
                    ls.links[index] = call


def _snapshot(ls: _Lists, generation: int, *, partial: bool = False) -> HotWindowSnapshot:
    length = len(ls.records)
    return HotWindowSnapshot(
        rows=LazyRows(ls, length),
        length=length,
        prefix=ls.prefix,
        events=ls.events,
        n_events=len(ls.events),
        event_rows=ls.event_rows,
        event_tokens=ls.event_tokens,
        links=ls.links,
        root_row=None if partial else ls.root_row,
        corrupt_count=ls.corrupt,
        generation=generation,
        partial=partial,
    )


PEEK_BYTES = 256 * 1024
PEEK_ABOVE_BYTES = 4 * 1024 * 1024
"""Files larger than this get a first paint of their newest PEEK_BYTES before the full load."""


class HotWindowModel:
    """events.jsonl tailed by byte offset, as rows (reset when the file is rewritten)."""

    def __init__(self, events_path: Path) -> None:
        self.path = events_path
        self._tail = EventTail(events_path)
        self._lists = _Lists()
        self._generation = 0
        self._loaded = False

    def peek(self) -> ModelUpdate | None:
        """Before the first full load of a big file: its newest lines, parsed on their own, so
        the screen shows the newest events at once (numbers and the root come with the load)."""
        if self._loaded:
            return None
        start = time.perf_counter()
        try:
            with open(self.path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size <= PEEK_ABOVE_BYTES:
                    return None
                fh.seek(size - PEEK_BYTES)
                data = fh.read(PEEK_BYTES)
        except OSError:
            return None
        first_nl = data.find(b"\n")
        if first_nl < 0:
            return None
        base = size - PEEK_BYTES + first_nl + 1
        parsed = parse_event_lines(data[first_nl + 1 :], base_offset=base, base_line=0, final=False)
        records = [
            Record(
                line_no=p.line_no,
                offset=p.offset,
                length=p.length,
                event=p.event,
                error=p.error,
                raw=p.raw[:RAW_KEEP_BYTES],
                tokens=estimate_event_tokens(p.event) if p.event is not None else 0,
            )
            for p in parsed.lines
        ]
        ls = _Lists()
        _extend(ls, records)
        return ModelUpdate(
            snapshot=_snapshot(ls, -1, partial=True),
            reset=True,
            appended=len(records),
            elapsed_ms=(time.perf_counter() - start) * 1000,
        )

    def poll(self) -> ModelUpdate:
        """Read what was appended since the last poll (everything after a rewrite)."""
        start = time.perf_counter()
        missing = not self.path.exists()
        try:
            update = self._tail.poll()
            reset, records = bool(update.reset), list(update.records)
        except FileNotFoundError:
            reset, records, missing = bool(self._lists.records), [], True
        if missing and self._lists.records:
            reset = True
        if reset:
            self._lists = _Lists()
            self._generation += 1
        _extend(self._lists, records)
        first = not self._loaded
        self._loaded = True
        return ModelUpdate(
            snapshot=self.snapshot(),
            reset=reset or first,
            appended=len(records),
            elapsed_ms=(time.perf_counter() - start) * 1000,
            missing=missing,
        )

    def snapshot(self) -> HotWindowSnapshot:
        return _snapshot(self._lists, self._generation)


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
        # The store reads a damaged state.json as a fresh state and says so in its warnings.
        errors.extend(manager.store.warnings)
        manager.store.warnings.clear()
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
