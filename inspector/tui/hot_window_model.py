"""The inspector's data model of the hot window, free of Textual so it can be tested and timed.

`HotWindowModel` follows events.jsonl with a `core.store.reader.EventTail` and keeps, per line, only
what the list draws and the planner reads, in compact form: byte offset and length, line
number, tokens, id, type, role, tool_call_id, the synthetic mark (parallel arrays and lists; no
event dict is kept). A `Row` (ts, cut class, capped preview) is built when it is first drawn or
selected (`LazyRows`) by reading its line again by offset, and the detail pane parses the full
event the same way (`HotWindowSnapshot.read_event`). A 100k-event session thus costs a few MB
beyond the file's own page cache, not the ~4x of its parsed dicts. Cumulative tokens "from the
newest" come from prefix sums, so an append never rewrites earlier rows.

The first load reads the file in `LOAD_CHUNK_BYTES` pieces, so only one piece is ever parsed at
a time. A big file first gets `peek()`: its newest 256 KB, so the newest events are on screen
while the whole file loads (row numbers and the pinned root follow with the full load).

Threading: `poll()` runs in one worker thread at a time. Rows are only ever appended to the
current lists, and a reset (a rewritten file) swaps in new lists, so a `HotWindowSnapshot`
(lists plus a length) stays valid and consistent on the UI thread without copying 100k rows.
The row cache is filled from the UI thread only.
"""

from __future__ import annotations

import os
import sys
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, overload

from core.compaction.headroom import Headroom
from core.compaction.planner import (
    CompactionPlan,
    PlannerConfig,
    plan_compaction,
    resolve_turn_start_chunk,
)
from core.compaction.prompt_size import PromptSize
from core.compaction.state import SessionState
from core.compaction.trigger import TriggerDecision, read_trigger
from core.config import CompactionConfig
from core.errors import IndexCorruptError, SessionMemoryError
from core.events import CutClass, Event, cut_class, is_synthetic
from core.index.catalog import chunk_count as index_chunk_count
from core.index.pending import list_pending
from core.jsonl import parse_event_lines
from core.manager import MemoryManager
from core.status import ArchiveInfo
from core.store.atomic import open_no_symlink
from core.store.reader import EventTail
from core.text import content_text
from core.tokens import estimate_event_tokens
from inspector.safe_text import one_line
from inspector.tui.archive_list import list_archives_light

_T = TypeVar("_T")

PREVIEW_CHARS = 160
"""Cap on a row's preview; the full text is only ever read for the selected event."""

LOAD_CHUNK_BYTES = 4 * 1024 * 1024
"""The first load parses this much of events.jsonl at a time (dicts are dropped per piece)."""

CHANGED_PREVIEW = "(events.jsonl changed under this row; reloading)"


def _str_field(event: Event, key: str) -> str:
    value = event.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _as_text(value: object) -> str:
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
    """One line of events.jsonl as the hot-window list shows it (no event dict: see
    `HotWindowSnapshot.read_event` for the full event)."""

    index: int
    line_no: int
    offset: int
    length: int
    event_index: int | None
    """Index among the parsed events (what the planner numbers); None for a corrupt line."""
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
        return self.event_index is None


_SHORT: dict[str, str] = {}


def _short(value: object) -> object:
    """type/role values repeat: keep one string object per distinct value."""
    if isinstance(value, str) and len(value) <= 64:
        return _SHORT.setdefault(value, value) if len(_SHORT) < 10_000 else sys.intern(value)
    return value


@dataclass
class _Lists:
    """The rows of one generation of events.jsonl, compact; only ever appended to."""

    line_no: array[int] = field(default_factory=lambda: array("q"))
    offset: array[int] = field(default_factory=lambda: array("q"))
    length: array[int] = field(default_factory=lambda: array("q"))
    tokens: array[int] = field(default_factory=lambda: array("q"))
    row_event: array[int] = field(default_factory=lambda: array("q"))
    """Event index of each row; -1 for a corrupt line."""
    prefix: array[int] = field(default_factory=lambda: array("q", [0]))
    ids: list[object] = field(default_factory=list)
    """The event's `id` value as read (None when absent); None for a corrupt line."""
    types: list[object] = field(default_factory=list)
    roles: list[object] = field(default_factory=list)
    tool_call_ids: dict[int, object] = field(default_factory=dict)
    """row -> tool_call_id value, for the rows that have one."""
    synthetic: set[int] = field(default_factory=set)
    synthetic_meta: dict[int, Event] = field(default_factory=dict)
    """row -> what the planner reads of a synthetic event besides its mark: the chunk it came
    from, the turn start it names and the start of its content (the turn's request)."""
    corrupt_lines: dict[int, tuple[str, str]] = field(default_factory=dict)
    """row -> (error, capped text of the line)."""
    event_rows: array[int] = field(default_factory=lambda: array("q"))
    event_tokens: array[int] = field(default_factory=lambda: array("q"))
    links: dict[int, int] = field(default_factory=dict)
    open_calls: dict[str, int] = field(default_factory=dict)
    root_row: int | None = None
    corrupt: int = 0
    cache: dict[int, Row] = field(default_factory=dict)
    """Rows built so far (only the ones drawn or selected are ever built)."""
    n_rows: int = 0
    """Rows whose every field is written. The loader thread appends while the UI thread takes
    snapshots, so a snapshot must never count a row that is only half added."""
    n_events: int = 0

    def add_event(self, line_no: int, offset: int, length: int, event: Event, tokens: int) -> None:
        index = len(self.offset)
        self._add_line(line_no, offset, length, tokens, len(self.event_rows))
        self.event_rows.append(index)
        self.event_tokens.append(tokens)
        self.ids.append(event.get("id"))
        self.types.append(_short(event.get("type")))
        self.roles.append(_short(event.get("role")))
        if is_synthetic(event):
            self.synthetic.add(index)
            meta = event.get("meta")
            kept = {
                k: v
                for k, v in (meta.items() if isinstance(meta, dict) else ())
                if k in ("synthetic", "chunk_id", "turn_start_event_id") and isinstance(v, str)
            }
            content = event.get("content")
            self.synthetic_meta[index] = {
                "meta": kept,
                "content": content[:2000] if isinstance(content, str) else "",
            }
        if self.root_row is None and cut_class(event) is CutClass.BOUNDARY:
            self.root_row = index
        tcid = event.get("tool_call_id")
        if tcid is not None:
            self.tool_call_ids[index] = tcid
        if isinstance(tcid, str) and tcid:
            etype = event.get("type")
            if etype == "tool_call":
                self.open_calls[tcid] = index
            elif etype == "tool_result":
                call = self.open_calls.pop(tcid, None)
                if call is not None:
                    self.links[call] = index
                    self.links[index] = call
        self.n_events = len(self.event_rows)
        self.n_rows = index + 1

    def add_corrupt(
        self, line_no: int, offset: int, length: int, error: str | None, raw: object
    ) -> None:
        index = len(self.offset)
        self._add_line(line_no, offset, length, 0, -1)
        self.ids.append(None)
        self.types.append(None)
        self.roles.append(None)
        self.corrupt += 1
        text = one_line(_raw_text(raw), PREVIEW_CHARS)
        self.corrupt_lines[index] = (str(error or "unparsable line"), text)
        self.n_rows = index + 1

    def _add_line(self, line_no: int, offset: int, length: int, tokens: int, ev: int) -> None:
        self.line_no.append(line_no)
        self.offset.append(offset)
        self.length.append(length)
        self.tokens.append(tokens)
        self.row_event.append(ev)
        self.prefix.append(self.prefix[-1] + tokens)

    def light_event(self, row: int) -> Event:
        """What the planner reads of an event: id, type, role, tool_call_id, the synthetic mark
        (with a synthetic event's chunk, turn start and request)."""
        event: Event = {"id": self.ids[row], "type": self.types[row], "role": self.roles[row]}
        tcid = self.tool_call_ids.get(row)
        if tcid is not None:
            event["tool_call_id"] = tcid
        if row in self.synthetic:
            event["meta"] = {"synthetic": "split_turn_prefix"}
            known = self.synthetic_meta.get(row)
            if known is not None:
                event["meta"] = dict(known["meta"])
                event["content"] = known["content"]
        return event


def _read_span(path: Path, offset: int, length: int) -> bytes | None:
    try:
        with os.fdopen(open_no_symlink(path, os.O_RDONLY), "rb") as fh:
            return os.pread(fh.fileno(), length, offset)
    except OSError:
        return None


def _parse_one(data: bytes | None) -> Event | None:
    if data is None:
        return None
    parsed = parse_event_lines(data if data.endswith(b"\n") else data + b"\n", final=True)
    return parsed.lines[0].event if len(parsed.lines) == 1 else None


def _checked(ls: _Lists, i: int, event: Event | None) -> Event | None:
    """`event` if it is still row i's event (same id and type), else None."""
    if event is None:
        return None
    if _as_text(event.get("id")) != _as_text(ls.ids[i]):
        return None
    if _as_text(event.get("type")) != _as_text(ls.types[i]):
        return None
    return event


def _load_event(path: Path, ls: _Lists, i: int) -> Event | None:
    """Row i's event parsed again from the file; None if the line there is no longer it."""
    return _checked(ls, i, _parse_one(_read_span(path, ls.offset[i], ls.length[i])))


PREFETCH_MAX_BYTES = 1024 * 1024
"""`LazyRows.prefetch` reads at most this much in one go (more: row by row, as drawn)."""


def build_row(path: Path, ls: _Lists, i: int) -> tuple[Row, bool]:
    """Row i, and whether it is final (False: its line changed, the next poll resets)."""
    if ls.row_event[i] < 0:
        return _row_of(ls, i, None)
    return _row_of(ls, i, _load_event(path, ls, i))


def _row_of(ls: _Lists, i: int, event: Event | None) -> tuple[Row, bool]:
    """Row i from its event as read again (None: the line changed; unused for a corrupt row)."""
    ev = ls.row_event[i]
    line_no, offset, length, tokens = ls.line_no[i], ls.offset[i], ls.length[i], ls.tokens[i]
    if ev < 0:
        error, text = ls.corrupt_lines[i]
        row = Row(
            index=i,
            line_no=line_no,
            offset=offset,
            length=length,
            event_index=None,
            error=error,
            event_id="",
            ts="",
            type="(corrupt)",
            role="",
            cut=None,
            tokens=tokens,
            preview=text,
            synthetic=False,
            tool_call_id=None,
        )
        return row, True
    etype, role = ls.types[i], ls.roles[i]
    tcid = ls.tool_call_ids.get(i)
    row = Row(
        index=i,
        line_no=line_no,
        offset=offset,
        length=length,
        event_index=ev,
        error=None,
        event_id=_as_text(ls.ids[i]),
        ts=_str_field(event, "ts") if event is not None else "",
        type=_as_text(etype),
        role=_as_text(role),
        cut=cut_class({"type": etype, "role": role}),
        tokens=tokens,
        preview=preview_of(event) if event is not None else CHANGED_PREVIEW,
        synthetic=i in ls.synthetic,
        tool_call_id=tcid if isinstance(tcid, str) and tcid else None,
    )
    return row, event is not None


class _Lazy(Sequence[_T]):
    """A sequence of `len` items, each built by `_item(i)` when it is read."""

    def __init__(self, length: int) -> None:
        self._length = length

    def __len__(self) -> int:
        return self._length

    def _item(self, i: int) -> _T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> _T: ...

    @overload
    def __getitem__(self, index: slice) -> list[_T]: ...

    def __getitem__(self, index: int | slice) -> _T | list[_T]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._item(index)

    def __iter__(self) -> Iterator[_T]:
        return (self._item(i) for i in range(self._length))


class LazyRows(_Lazy[Row]):
    """rows[i] builds the Row of line i on first use (a 100k-row load builds ~40)."""

    def __init__(self, path: Path, lists: _Lists, length: int) -> None:
        super().__init__(length)
        self._path = path
        self._lists = lists

    def _item(self, i: int) -> Row:
        ls = self._lists
        row = ls.cache.get(i)
        if row is None:
            row, final = build_row(self._path, ls, i)
            if final:
                self._keep(i, row)
        return row

    def _keep(self, i: int, row: Row) -> None:
        cache = self._lists.cache
        if len(cache) > 20_000:
            cache.clear()
        cache[i] = row

    def is_built(self, i: int) -> bool:
        return i in self._lists.cache

    def prefetch(self, start: int, stop: int) -> None:
        """Build the rows start..stop-1 not built yet with one read of their span of the file,
        not one open and read per row: a screen of new rows while an agent appends fast costs
        one system call, not forty (rows it cannot build this way are built when drawn)."""
        ls = self._lists
        start, stop = max(0, start), min(stop, self._length)
        todo: list[int] = []
        for i in range(start, stop):
            if i in ls.cache:
                continue
            if ls.row_event[i] < 0:
                self._keep(i, _row_of(ls, i, None)[0])  # a corrupt line: nothing to read
            else:
                todo.append(i)
        if not todo:
            return
        base = ls.offset[todo[0]]
        end = ls.offset[todo[-1]] + ls.length[todo[-1]]
        if end - base > PREFETCH_MAX_BYTES:
            return
        data = _read_span(self._path, base, end - base)
        if data is None or len(data) != end - base:
            return
        for i in todo:
            at = ls.offset[i] - base
            event = _checked(ls, i, _parse_one(data[at : at + ls.length[i]]))
            if event is None:
                continue  # drawn row by row: it says the line changed
            row, _final = _row_of(ls, i, event)
            self._keep(i, row)


class _LightEvents(_Lazy[Event]):
    """The first n events as the planner reads them, built on access (no dict is kept)."""

    def __init__(self, lists: _Lists, n: int) -> None:
        super().__init__(n)
        self._lists = lists

    def _item(self, i: int) -> Event:
        return self._lists.light_event(self._lists.event_rows[i])


class _EventIds(_Lazy[object]):
    """The ids of the first n events, read on access (the trigger scans back from the end)."""

    def __init__(self, events: Sequence[Event], n: int) -> None:
        super().__init__(n)
        self._events = events

    def _item(self, i: int) -> object:
        return self._events[i].get("id")


@dataclass(frozen=True)
class HotWindowSnapshot:
    """A consistent view of the first `length` rows (see the module docstring)."""

    rows: Sequence[Row]
    length: int
    prefix: Sequence[int]
    """prefix[i]: tokens of rows[:i]; len == length + 1 at least."""
    events: Sequence[Event]
    """Light events (id, type, role, tool_call_id, synthetic mark): what the planner reads."""
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
    path: Path | None = None
    lists: Any = None
    """The model's `_Lists` the rows come from (for `read_event`)."""

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
        """Light events for the planner: it reads only type, role, id, tool_call_id and
        meta.synthetic (tokens come precomputed from `token_list`)."""
        return list(self.events[: self.n_events])

    def token_list(self) -> list[int]:
        return list(self.event_tokens[: self.n_events])

    def event_ids(self) -> Sequence[object]:
        return _EventIds(self.events, self.n_events)

    def row_of_event(self, event_index: int | None) -> int | None:
        if event_index is None or not 0 <= event_index < self.n_events:
            return None
        return self.event_rows[event_index]

    def read_event(self, row: Row) -> Event | None:
        """The row's full event, parsed from the file now; None for a corrupt line or when the
        line at the row's offset is no longer that event (the file was rewritten)."""
        if row.corrupt or self.path is None or not isinstance(self.lists, _Lists):
            return None
        if not 0 <= row.index < self.length:
            return None
        return _load_event(self.path, self.lists, row.index)


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


def _snapshot(
    path: Path, ls: _Lists, generation: int, *, partial: bool = False
) -> HotWindowSnapshot:
    n_events = ls.n_events  # before n_rows: the writer sets n_events first
    length = ls.n_rows
    return HotWindowSnapshot(
        rows=LazyRows(path, ls, length),
        length=length,
        prefix=ls.prefix,
        events=_LightEvents(ls, n_events),
        n_events=n_events,
        event_rows=ls.event_rows,
        event_tokens=ls.event_tokens,
        links=ls.links,
        root_row=None if partial else ls.root_row,
        corrupt_count=ls.corrupt,
        generation=generation,
        partial=partial,
        path=path,
        lists=ls,
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
            with os.fdopen(open_no_symlink(self.path, os.O_RDONLY), "rb") as fh:
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
        ls = _Lists()
        for p in parsed.lines:
            if p.event is None:
                ls.add_corrupt(p.line_no, p.offset, p.length, p.error, p.raw)
            else:
                tokens = estimate_event_tokens(p.event)
                ls.add_event(p.line_no, p.offset, p.length, p.event, tokens)
        return ModelUpdate(
            snapshot=_snapshot(self.path, ls, -1, partial=True),
            reset=True,
            appended=len(parsed.lines),
            elapsed_ms=(time.perf_counter() - start) * 1000,
        )

    def poll(self) -> ModelUpdate:
        """Read what was appended since the last poll (everything after a rewrite)."""
        start = time.perf_counter()
        missing = not self.path.exists()
        reset, appended = False, 0
        try:
            while True:
                update = self._tail.poll(max_bytes=LOAD_CHUNK_BYTES)
                if update.reset:
                    reset, appended = True, 0
                    self._new_generation()
                for r in update.records:
                    if r.event is None:
                        self._lists.add_corrupt(r.line_no, r.offset, r.length, r.error, r.raw)
                    else:
                        self._lists.add_event(r.line_no, r.offset, r.length, r.event, r.tokens)
                appended += len(update.records)
                if not update.more:
                    break
        except FileNotFoundError:
            missing = True
        if missing and self._lists.n_rows:
            reset, appended = True, 0
            self._new_generation()
        first = not self._loaded
        self._loaded = True
        return ModelUpdate(
            snapshot=self.snapshot(),
            reset=reset or first,
            appended=appended,
            elapsed_ms=(time.perf_counter() - start) * 1000,
            missing=missing,
        )

    def _new_generation(self) -> None:
        self._lists = _Lists()
        self._generation += 1

    def snapshot(self) -> HotWindowSnapshot:
        return _snapshot(self.path, self._lists, self._generation)


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


class Planner(Protocol):
    """Plans a snapshot's events as `plan_compaction` does (e.g. `PlanProcess.plan`, off the
    GIL), headroom included when given."""

    def __call__(
        self,
        snapshot: HotWindowSnapshot,
        config: PlannerConfig,
        headroom: Headroom | None = None,
    ) -> CompactionPlan: ...


def plan_rows(
    snapshot: HotWindowSnapshot,
    config: PlannerConfig,
    planner: Planner | None = None,
    entry_extra: Callable[[str], dict[str, Any] | None] | None = None,
    headroom: Headroom | None = None,
) -> CutPreview:
    """Plan on the snapshot's parsed events (corrupt lines are not events) and map to rows;
    `planner` works the plan out elsewhere (same inputs, same plan); `entry_extra` (an index
    entry's extra fields by chunk id) names the chunk that holds a continued turn's request."""
    if planner is not None:
        plan = planner(snapshot, config, headroom)
    else:
        plan = plan_compaction(
            snapshot.event_list(), config, tokens=snapshot.token_list(), headroom=headroom
        )
    if entry_extra is not None:
        plan = resolve_turn_start_chunk(plan, entry_extra)
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
    prompt_state: SessionState | None = None
    """state.json as read, for the trigger's prompt size (figure, source, anchor)."""
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
    prompt_state: SessionState | None = None
    if paths.state.exists():
        try:
            state = manager.store.read_state()
            sid, model, last_prompt = state.session_id, state.model, state.last_prompt_tokens
            prompt_state = state
            run_started = state.run_started_at
        except SessionMemoryError as exc:
            errors.append(str(exc))
        # The store reads a damaged state.json as a fresh state and says so in its warnings.
        errors.extend(manager.store.warnings)
        manager.store.warnings.clear()
    chunk_count, index_error = 0, None
    try:
        chunk_count = index_chunk_count(paths)  # cached: one stat when unchanged
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
            archives = tuple(light.info for light in list_archives_light(manager))
        except (SessionMemoryError, OSError) as exc:
            errors.append(str(exc))
            archives = ()
    return LightStatus(
        session_id=sid,
        model=manager.model or model,
        last_prompt_tokens=last_prompt,
        prompt_state=prompt_state,
        run_started_at=run_started,
        chunk_count=chunk_count,
        pending_count=pending,
        quarantined_lines=quarantined,
        index_error=index_error,
        archives=archives,
        errors=tuple(errors),
        elapsed_ms=(time.perf_counter() - start) * 1000,
    )


@dataclass(frozen=True)
class PlanNow:
    """What the plan job works out for the hot window as it is: the cut preview and the
    trigger's verdict with the what-if values, the verdict with the configured ones (the
    budget gauge), and the prompt size both were given."""

    preview: CutPreview
    trigger: TriggerDecision
    real_trigger: TriggerDecision
    size: PromptSize


def what_if_config(
    config: CompactionConfig, keep_recent_tokens: int | None, hot_window_events: int | None
) -> CompactionConfig:
    """The config with the what-if panel's values in place of the configured ones."""
    changes: dict[str, int] = {}
    if keep_recent_tokens:
        changes["keep_recent_tokens"] = keep_recent_tokens
    if hot_window_events:
        changes["hot_window_events"] = hot_window_events
    return config.replace(**changes) if changes else config


def plan_now(
    snapshot: HotWindowSnapshot,
    status: LightStatus,
    config: CompactionConfig,
    what_if: CompactionConfig,
    what_if_prompt_tokens: int | None = None,
    planner: Planner | None = None,
    entry_extra: Callable[[str], dict[str, Any] | None] | None = None,
    headroom: Headroom | None = None,
) -> PlanNow:
    """Plan the snapshot with `what_if` (the config with the panel's values) and ask the
    trigger, with the panel's prompt size when one is typed; no I/O but `planner`'s (the
    app's plan worker runs it, a test can call it on a snapshot)."""
    state, ids, tokens = status.prompt_state, snapshot.event_ids(), snapshot.token_list()
    real = read_trigger(state, ids, tokens, config, status.model)
    size = real.size
    trigger = read_trigger(state, ids, tokens, what_if, status.model, what_if_prompt_tokens)
    preview = plan_rows(snapshot, what_if, planner, entry_extra, headroom)
    return PlanNow(preview, trigger.decision, real.decision, size)
